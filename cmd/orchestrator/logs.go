package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/autoretry/orchestrator/internal/foundations/statefile"
	"github.com/autoretry/orchestrator/orchestrator"
)

func init() {
	register(&command{
		name:        "logs",
		summary:     "print the current or a past loop's output",
		longRunning: true,
		usage: `Usage: orchestrator logs [-f] [--loop N] [--run ID] [--dir DIR]

Prints the output of the current loop, or of the last one when no run is
at work, from logs/loops/ (the last MiB of each loop's output is kept
there). It only reads.

Flags:
    -f          follow: print the output as it comes, until the loop ends
    --loop N    loop N of the run instead of the latest loop
    --run ID    a past run (its ID as status and the summaries show it)
                instead of the latest

Examples:
    orchestrator logs -f
    orchestrator logs --loop 2
`,
		run: runLogs,
	})
}

func runLogs(ctx context.Context, e *env, args []string) error {
	c := commands["logs"]
	fs := flag.NewFlagSet("logs", flag.ContinueOnError)
	follow := fs.Bool("f", false, "")
	loop := fs.Int("loop", 0, "")
	runID := fs.String("run", "", "")
	if err := e.noArgs(c, fs, args); err != nil {
		return err
	}
	if fi, err := os.Stat(e.dir); err != nil || !fi.IsDir() {
		return withCode(exitUsage, fmt.Errorf("state directory %s does not exist", e.dir), "run '"+self+" init' to create it, or pass --dir DIR")
	}
	logDir := e.paths().LoopLogs()
	ll, err := findLoopLog(logDir, *runID, *loop)
	if err != nil {
		return withCode(exitNothing, err, "'"+self+" status' shows the runs; a loop's output is kept for [logs] text_retention")
	}
	if !*follow {
		f, err := os.Open(ll.path)
		if err != nil {
			return err
		}
		defer f.Close()
		_, err = io.Copy(e.stdout, f)
		return err
	}
	return followLoop(ctx, e, ll)
}

// loopLog is one loop's output file: logs/loops/RUNID-NN.log.
type loopLog struct {
	path  string
	runID string
	loop  int
}

// loopLogs lists the loop output files of logDir, oldest first (run IDs
// begin with their start time).
func loopLogs(logDir string) ([]loopLog, error) {
	ents, err := os.ReadDir(logDir)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	var out []loopLog
	for _, de := range ents {
		name, ok := strings.CutSuffix(de.Name(), ".log")
		if !ok {
			continue
		}
		i := strings.LastIndexByte(name, '-')
		if i <= 0 {
			continue
		}
		n, err := strconv.Atoi(name[i+1:])
		if err != nil {
			continue
		}
		out = append(out, loopLog{path: filepath.Join(logDir, de.Name()), runID: name[:i], loop: n})
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].runID != out[j].runID {
			return runStart(out[i].runID) < runStart(out[j].runID)
		}
		return out[i].loop < out[j].loop
	})
	return out, nil
}

// runStart is the start time at the front of a run ID, which sorts as text.
func runStart(id string) string {
	if i := strings.IndexByte(id, '-'); i > 0 {
		return id[:i]
	}
	return id
}

// findLoopLog finds the output of loop (0: the latest) of run (empty: the
// latest).
func findLoopLog(logDir, run string, loop int) (loopLog, error) {
	all, err := loopLogs(logDir)
	if err != nil {
		return loopLog{}, err
	}
	if run == "" && len(all) > 0 {
		run = all[len(all)-1].runID
	}
	var found *loopLog
	for i := range all {
		if all[i].runID == run && (loop == 0 || all[i].loop == loop) {
			found = &all[i]
		}
	}
	switch {
	case found != nil:
		return *found, nil
	case len(all) == 0:
		return loopLog{}, errors.New("no loop has run yet: logs/loops/ holds no output")
	case loop != 0:
		return loopLog{}, fmt.Errorf("run %s has no loop %d in logs/loops/", run, loop)
	}
	return loopLog{}, fmt.Errorf("no output of run %s in logs/loops/", run)
}

// followLoop prints the loop's output as it comes, and returns once the
// loop has ended: no run holds the state directory, a later loop has
// started, or the event log recorded the loop's execution.
func followLoop(ctx context.Context, e *env, ll loopLog) error {
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return err
	}
	defer w.Close()
	if err := w.Add(filepath.Dir(ll.path)); err != nil {
		return err
	}
	// A change the watcher misses (a full queue, a file system that does
	// not tell) is still seen within a second.
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	var off int64
	for {
		ended := loopEnded(e.dir, ll)
		n, err := copyFrom(e.stdout, ll.path, off)
		if err != nil {
			return err
		}
		off = n
		if ended {
			return nil
		}
		select {
		case <-ctx.Done():
			return nil
		case <-w.Events:
		case err := <-w.Errors:
			if err != nil {
				return err
			}
		case <-tick.C:
		}
	}
}

// copyFrom writes what path holds from off on, and returns the offset
// reached. A file that shrank (the runner keeps only the end of a long
// output) is read again from where its kept part starts.
func copyFrom(w io.Writer, path string, off int64) (int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return off, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return off, err
	}
	if fi.Size() < off {
		fmt.Fprintln(w, "[earlier output cut]")
		off = 0
	}
	if _, err := f.Seek(off, io.SeekStart); err != nil {
		return off, err
	}
	n, err := io.Copy(w, f)
	return off + n, err
}

// loopEnded reports whether the loop of ll is over.
func loopEnded(dir string, ll loopLog) bool {
	if _, held, err := statefile.RunHolder(dir); err == nil && !held {
		return true
	}
	if all, err := loopLogs(filepath.Dir(ll.path)); err == nil && len(all) > 0 {
		if last := all[len(all)-1]; last.runID != ll.runID || last.loop > ll.loop {
			return true
		}
	}
	done := false
	since, _ := time.Parse("20060102T150405Z", runStart(ll.runID))
	orchestrator.EachEvent(dir, since, func(ev orchestrator.Event) {
		if ev.RunID == ll.runID && (ev.Event == orchestrator.EvExec && ev.Loop == ll.loop || ev.Event == orchestrator.EvRunFinished) {
			done = true
		}
	})
	return done
}
