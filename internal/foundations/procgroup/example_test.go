package procgroup_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"time"

	"github.com/autoretry/orchestrator/internal/foundations/procgroup"
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

// writerFunc lets a function serve as Spec.Output.
type writerFunc func(p []byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

// The caller reads the command's reports as they come and stops it when
// one crosses a budget. Stop may be called from inside Output's Write.
func ExampleStopper() {
	var stop procgroup.Stopper
	var seen bytes.Buffer
	res, err := procgroup.Run(context.Background(), procgroup.Spec{
		Command: "echo 'cost 0.40'; echo 'cost 2.10'; sleep 30",
		Output: writerFunc(func(p []byte) (int, error) {
			seen.Write(p)
			if bytes.Contains(seen.Bytes(), []byte("cost 2.10\n")) {
				stop.Stop("cost over the $2.00 budget")
			}
			return len(p), nil
		}),
		Stop: &stop,
	})
	if err != nil {
		fmt.Println("error:", err)
		return
	}
	fmt.Printf("stopped by %q, shell killed by %s\n", res.StoppedBy, res.Signal)
	// Output:
	// stopped by "cost over the $2.00 budget", shell killed by SIGTERM
}
