package config_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/autoretry/orchestrator/internal/foundations/config"
)

func ExampleLoadOptional() {
	dir, _ := os.MkdirTemp("", "orchestrator")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "config.toml")
	_ = os.WriteFile(path, []byte(`
[loop]
command = "./improve.sh"
max_loops = 8

[verify.build]
command = "go build ./..."
`), 0o644)

	env := map[string]string{"ORCHESTRATOR_AUTO_RETRY_GLOBAL_CAP": "20"}
	c, err := config.LoadOptional(path, func(k string) string { return env[k] })
	if err != nil {
		fmt.Println(err)
		return
	}
	// A flag such as "run --max-loops 4" is applied last, so it wins.
	if err := c.Set("loop.max_loops", "4"); err != nil {
		fmt.Println(err)
		return
	}
	build, _ := c.Verify("build")
	fmt.Println("command:", c.Loop.Command, "timeout:", c.Loop.Timeout)
	fmt.Println("max loops:", c.Loop.MaxLoops, "global cap:", c.AutoRetry.GlobalCap)
	fmt.Println("max retries for a build issue:", c.MaxRetriesFor("build"), "for a bug:", c.MaxRetriesFor("bug"))
	fmt.Println("verify build:", build.Command, "within", build.Timeout)
	// Output:
	// command: ./improve.sh timeout: 30m0s
	// max loops: 4 global cap: 20
	// max retries for a build issue: 1 for a bug: 10
	// verify build: go build ./... within 5m0s
}

func ExampleError() {
	dir, _ := os.MkdirTemp("", "orchestrator")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "config.toml")
	_ = os.WriteFile(path, []byte(`[auto_retry]
globl_cap = 20
[backoff]
jitter = 1.5
`), 0o644)

	_, err := config.Load(path, nil)
	var ce *config.Error
	if errors.As(err, &ce) {
		for _, p := range ce.Problems {
			fmt.Printf("line %d: %s\n", p.Line, p.Msg)
		}
	}
	// Output:
	// line 2: unknown key "globl_cap" in [auto_retry] (did you mean "global_cap"?)
	// line 4: backoff.jitter: must be between 0 and 1, got 1.5
}
