package procgroup_test

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/autoretry/orchestrator/internal/procgroup"
)

func ExampleRun() {
	res, err := procgroup.Run(context.Background(), procgroup.Spec{
		Command: "echo compiling; echo 'main.go:3: syntax error' >&2; exit 2",
		Output:  os.Stdout,
		Timeout: time.Minute,
		Tail:    64 << 10,
	})
	if err != nil {
		fmt.Println("error:", err)
		return
	}
	fmt.Printf("exit code %d, %d bytes of output, timed out: %v\n", res.ExitCode, res.OutputBytes, res.TimedOut)
	// Output:
	// compiling
	// main.go:3: syntax error
	// exit code 2, 34 bytes of output, timed out: false
}
