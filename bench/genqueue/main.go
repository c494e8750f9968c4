// Command genqueue writes a realistic issue queue of any size for the queue
// benchmarks (bench/queue.sh): every field of an issue with varied values,
// most issues resolved, a few pending auto-retry issues for the end-of-loop
// check to retry or escalate, fenced failure output and attempt histories.
// The same flags always give the same bytes.
//
// Usage:
//
//	genqueue [-n ISSUES] [-seed N] > issue_queue.md
//	genqueue [-n ISSUES] [-seed N] -dir DIR
//
// With -dir it writes DIR/issue_queue.md and a matching DIR/session_state.md
// (a run open, no auto-retry loop used yet), creating DIR if needed, and
// prints what a check on it will do.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"os"

	"github.com/autoretry/orchestrator/internal/testkit/queuegen"
)

func main() {
	n := flag.Int("n", 10000, "number of issues")
	seed := flag.Uint64("seed", 1, "random seed")
	dir := flag.String("dir", "", "write issue_queue.md and session_state.md into this directory instead of the queue to stdout")
	flag.Parse()
	if flag.NArg() != 0 || *n < 0 {
		fmt.Fprintln(os.Stderr, "usage: genqueue [-n ISSUES] [-seed N] [-dir DIR]")
		os.Exit(2)
	}
	if err := run(*n, *seed, *dir); err != nil {
		fmt.Fprintln(os.Stderr, "genqueue:", err)
		os.Exit(1)
	}
}

func run(n int, seed uint64, dir string) error {
	r := queuegen.Generate(queuegen.Options{Issues: n, Seed: seed})
	if dir == "" {
		w := bufio.NewWriter(os.Stdout)
		if _, err := w.Write(r.Queue); err != nil {
			return err
		}
		return w.Flush()
	}
	if err := r.Write(dir); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "%s: %d issues, %d bytes (%.2f MiB); check retries %d and escalates %d\n",
		dir, n, len(r.Queue), float64(len(r.Queue))/(1<<20), len(r.Retried), len(r.Exhausted))
	return nil
}
