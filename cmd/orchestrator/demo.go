package main

import (
	"context"
	"embed"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/autoretry/orchestrator/orchestrator"
)

//go:embed demo/config.toml demo/demo-agent.sh demo/demo-verify.sh
var demoFiles embed.FS

func init() {
	register(&command{
		name:        "demo",
		longRunning: true,
		summary:     "watch the main job on the embedded example, with a simulated agent",
		usage: `Usage: orchestrator demo [--into DIR]

Copies the embedded example into a fresh directory and runs the real
'orchestrator run' on it, with a bundled simulated agent as the loop command.
What you see is the product running, not a recording:

  - the regular loop's QA step files a critical issue ("API returns 500");
  - auto-retry loops retry it with the retry context: it fails with the same
    error twice (repeat 2/3), then a different one, then its fix passes
    verification (SUCCEEDED);
  - the example's build issue fails identically each time — timestamps,
    durations and addresses differ, the signature does not — until it halts on
    the third repeat (HALTED), so the run stops with exit status 3, as a cron
    mail would show.

Then it says where the files are and what to try next. The directory is kept.

Flags:
    --into DIR   use DIR (must not exist) instead of a new temporary directory
`,
		run: runDemo,
	})
}

func runDemo(ctx context.Context, e *env, args []string) error {
	c := commands["demo"]
	fs := flag.NewFlagSet("demo", flag.ContinueOnError)
	into := fs.String("into", "", "")
	err := e.noArgs(c, fs, args)
	if err != nil {
		return err
	}
	project := *into
	if project == "" {
		if project, err = os.MkdirTemp("", "orchestrator-demo-"); err != nil {
			return err
		}
	} else if err := os.Mkdir(project, 0o755); err != nil {
		return withCode(exitUsage, fmt.Errorf("--into: %w", err), "name a directory that does not exist yet")
	}
	project, err = filepath.Abs(project)
	if err != nil {
		return err
	}
	state := filepath.Join(project, ".orchestrator")
	if err := copyExample(state); err != nil {
		return err
	}
	for src, dst := range map[string]string{
		"demo/config.toml":    filepath.Join(state, "config.toml"),
		"demo/demo-agent.sh":  filepath.Join(project, "demo-agent.sh"),
		"demo/demo-verify.sh": filepath.Join(project, "demo-verify.sh"),
	} {
		b, err := demoFiles.ReadFile(src)
		if err != nil {
			return err
		}
		if err := os.WriteFile(dst, b, 0o644); err != nil {
			return err
		}
	}
	// The agent calls "orchestrator"; make it this very binary, however it
	// was started (go run builds it in a temporary directory).
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	bin := filepath.Join(project, ".demo-bin")
	if err := os.Mkdir(bin, 0o755); err != nil {
		return err
	}
	if err := os.Symlink(exe, filepath.Join(bin, "orchestrator")); err != nil {
		return err
	}

	fmt.Fprintf(e.stdout, "Demo project: %s\nRunning 'orchestrator run' there with a simulated agent…\n\n", project)
	de := *e
	de.dir, de.dirFlagged, de.configPath, de.cfg = state, true, "", nil
	o, err := de.engine("run")
	if err != nil {
		return err
	}
	environ := []string{}
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "PATH=") || strings.HasPrefix(kv, "ORCHESTRATOR_") {
			continue
		}
		environ = append(environ, kv)
	}
	environ = append(environ, "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	if e.getenv("NO_COLOR") != "" {
		environ = append(environ, "NO_COLOR=1")
	}
	// A fixed clock reaches the agent's own 'orchestrator add' too, so that
	// the issue it files is dated like the run.
	if v := e.getenv("ORCHESTRATOR_NOW"); v != "" {
		environ = append(environ, "ORCHESTRATOR_NOW="+v)
	}
	r := &orchestrator.Runner{O: o, Terminal: e.stdout, Stderr: e.stderr, Environ: environ, AfterLoop: de.metricsHook()}
	_, runErr := r.Run(ctx)
	var se *orchestrator.StopError
	switch {
	case runErr == nil:
		fmt.Fprintf(e.stdout, "\nThe run completed (exit status 0).\n")
	case errors.As(runErr, &se):
		fmt.Fprintf(e.stdout, "\nThe run stopped with exit status 3 — a cron job would report it: %s.\n", se)
	default:
		return runErr
	}
	inv := self + " --dir " + state
	fmt.Fprintf(e.stdout, `
The demo's files are in %s:
  issue_queue.md     the issues, edited in place: open it in your editor
  session_state.md   the run's counters and the circuit breaker
  history.csv        one row per loop;  logs/   retry.log, retry.jsonl, each loop's output

Try next (with "go run ./cmd/orchestrator" in place of "orchestrator" if it is not installed):
  %s status
  %s explain           # why the next loop would or would not run
  %s report            # writes analytics.html; open it in a browser
  %s context ISSUE-20261122-001
  %s retry ISSUE-20261122-001
`, state, inv, inv, inv, inv, inv)
	return nil
}
