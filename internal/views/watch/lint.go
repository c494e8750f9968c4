package watch

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/autoretry/orchestrator/internal/foundations/config"
	"github.com/autoretry/orchestrator/internal/foundations/statefile"
	"github.com/autoretry/orchestrator/internal/views/lintcheck"
	"github.com/autoretry/orchestrator/issuequeue"
	"github.com/autoretry/orchestrator/templates"
)

// contents is one look at the directory: the state files as they will be
// linted, and a digest of everything a lint reads, to tell whether anything
// changed since the last one.
type contents struct {
	queue, state       []byte // nil when missing
	queueErr, stateErr error
	digest             string
}

func (w *watcher) snapshot() contents {
	var c contents
	var d strings.Builder
	c.queue, c.queueErr = readOptional(w.abs.queue)
	digest(&d, "queue", c.queue, c.queueErr)
	c.state, c.stateErr = readOptional(w.abs.state)
	digest(&d, "state", c.state, c.stateErr)
	cfg, err := readOptional(w.abs.cfg)
	digest(&d, "config", cfg, err)
	entries, err := os.ReadDir(w.abs.templates)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		digest(&d, "templates", nil, err)
	}
	names := make([]string, 0, len(entries))
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".tmpl") {
			names = append(names, e.Name())
		}
	}
	sort.Strings(names)
	for _, n := range names {
		b, err := readOptional(filepath.Join(w.abs.templates, n))
		digest(&d, "templates/"+n, b, err)
	}
	c.digest = d.String()
	return c
}

// readOptional reads a file that may be missing; missing reads as nil, an
// empty file as an empty non-nil slice (as ReadThrough gives it).
func readOptional(path string) ([]byte, error) {
	b, err := statefile.ReadThrough(path) // a FIFO is refused, not waited on
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	return b, err
}

func digest(d *strings.Builder, label string, b []byte, err error) {
	d.WriteString(label + " ")
	switch {
	case err != nil:
		d.WriteString("error " + err.Error())
	case b == nil:
		d.WriteString("missing")
	default:
		sum := sha256.Sum256(b)
		d.WriteString(hex.EncodeToString(sum[:]))
	}
	d.WriteByte('\n')
}

// lintResult is what a run decision needs from a lint.
type lintResult struct {
	state   *issuequeue.State // nil if session_state.md could not be read
	pending int               // issues pending auto-retry
	invalid bool              // an error (not a warning) in any file: a run would refuse to start
}

// lint prints every problem of the state files, the configuration and the
// template overrides, the way orchestrator lint does, or the ok line.
func (w *watcher) lint(c contents) lintResult {
	var res lintResult
	var problems []string
	var q *issuequeue.Queue
	cfg, cfgErr := config.LoadOptional(w.cfg, w.o.Getenv)
	if c.queueErr != nil {
		problems = append(problems, readProblem(w.paths.Queue(), c.queueErr))
		res.invalid = true
	} else {
		q = issuequeue.ParseQueue(w.paths.Queue(), c.queue)
		for _, f := range q.Findings() {
			problems = append(problems, f.String())
		}
		res.invalid = res.invalid || q.Err() != nil
		// An issue whose Verify names no check does not keep a run from
		// starting: the run skips or warns about its verification.
		if cfg != nil {
			for _, f := range lintcheck.VerifyFindings(q, cfg) {
				problems = append(problems, f.String())
			}
		}
		for _, is := range q.Issues {
			if is.PendingAutoRetry() {
				res.pending++
			}
		}
	}
	if c.stateErr != nil {
		problems = append(problems, readProblem(w.paths.State(), c.stateErr))
		res.invalid = true
	} else {
		res.state = issuequeue.ParseState(w.paths.State(), c.state)
		for _, f := range res.state.Findings() {
			problems = append(problems, f.String())
		}
		res.invalid = res.invalid || res.state.Err() != nil
	}
	if cfgErr != nil {
		res.invalid = true
		lines, err := lintcheck.ConfigProblems(cfgErr)
		if err != nil {
			lines = []string{err.Error()}
		}
		problems = append(problems, lines...)
	}
	if err := (&templates.Set{Dir: w.tmpl}).Check(); err != nil {
		res.invalid = true
		if j, ok := err.(interface{ Unwrap() []error }); ok {
			for _, e := range j.Unwrap() {
				problems = append(problems, e.Error())
			}
		} else {
			problems = append(problems, err.Error())
		}
	}
	for _, p := range problems {
		w.printf("%s", p)
	}
	if len(problems) == 0 {
		w.printf("%s", w.okLine(q))
	}
	return res
}

func (w *watcher) okLine(q *issuequeue.Queue) string {
	if w.o.OKLine != nil {
		return w.o.OKLine(q)
	}
	pending := 0
	for _, is := range q.Issues {
		if is.PendingAutoRetry() {
			pending++
		}
	}
	return fmt.Sprintf("ok: %s: %d issue(s), %d pending auto-retry", w.paths.Queue(), len(q.Issues), pending)
}

func readProblem(name string, err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	return fmt.Sprintf("%s: cannot read: %v", name, err)
}
