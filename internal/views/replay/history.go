// Package replay runs the real engine again on what a loop's world did:
// a history of loops (what the loop command printed and how it exited,
// what its QA step filed, what verification said, what became of the
// workspace, what a person did), under any configuration. Every rule the
// engine has decides again, because the engine itself runs: on a fresh
// state directory, with a simulated clock, and with the history playing
// the loop command and the verification checks.
//
// A history comes from a file (bench/histories/FORMAT.md) or from a
// state directory's event log (FromLog).
package replay

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/autoretry/orchestrator/orchestrator"
)

// History is what the world did around the loops, loop by loop.
type History struct {
	Name     string          `json:"-"`
	File     string          `json:"-"` // the file it was read from
	Label    Label           `json:"label"`
	Why      string          `json:"why"`
	Kind     string          `json:"kind"`
	Source   string          `json:"source"`
	Config   string          `json:"config,omitempty"`
	Start    time.Time       `json:"start"`
	Every    Duration        `json:"every,omitzero"`
	Queue    string          `json:"queue"`
	Runs     []Run           `json:"runs"`
	Recorded []Outcome       `json:"recorded,omitempty"`
	Extra    json.RawMessage `json:"notes,omitempty"` // free text or data kept with it
}

// Kinds of history.
const (
	KindRecorded  = "recorded"
	KindIncident  = "incident"
	KindSynthetic = "synthetic"
)

// Run is one start of "orchestrator run": its regular loop, then the
// auto-retry loops the check asked for.
type Run struct {
	At    time.Time `json:"at,omitzero"`
	Loops []Loop    `json:"loops"`
}

// Exec is one execution of the loop command.
type Exec struct {
	Minutes float64 `json:"minutes,omitempty"` // 0: one minute
	Exit    int     `json:"exit,omitempty"`
	Output  string  `json:"output,omitempty"`
	Silent  float64 `json:"silent_minutes,omitempty"`
	Cost    float64 `json:"cost,omitempty"`
	// Tokens are the tokens its agent reported (input and output, cache
	// reads not counted): what replay counts as saved or added. The
	// engine reads them from Output, as [agent] kind says.
	Tokens int64 `json:"tokens,omitempty"`
}

// Loop is what one loop did.
type Loop struct {
	Exec
	Tries      []Exec            `json:"tries,omitempty"`
	Workspace  string            `json:"workspace,omitempty"`
	Add        []NewIssue        `json:"add,omitempty"`
	Fail       map[string]string `json:"fail,omitempty"`
	Resolve    []string          `json:"resolve,omitempty"`
	Verify     map[string]Result `json:"verify,omitempty"`
	Person     []string          `json:"person,omitempty"`
	Signatures map[string]string `json:"signatures,omitempty"`
}

// NewIssue is an issue a loop's QA step files.
type NewIssue struct {
	ID       string `json:"id"`
	Summary  string `json:"summary"`
	Priority string `json:"priority,omitempty"` // critical when empty
	Verify   string `json:"verify,omitempty"`
	Details  string `json:"details,omitempty"`
}

// Result is what a verification check said.
type Result struct {
	Exit   int    `json:"exit"`
	Output string `json:"output,omitempty"`
}

// Outcome is what the engine decided in one run.
type Outcome struct {
	Run   int               `json:"run"`
	Loops int               `json:"loops"`
	Code  orchestrator.Code `json:"code,omitempty"`
	Halts []Halt            `json:"halts,omitempty"`
}

// Halt is an issue a rule halted or escalated, after a loop of its run.
type Halt struct {
	Issue string            `json:"issue"`
	Loop  int               `json:"loop"`
	Code  orchestrator.Code `json:"code"`
}

// Label is the loop by which a careful person would have stopped the
// loops, or Never (0) for a productive history.
type Label int

// Never labels a history that must not be stopped.
const Never Label = 0

func (l Label) MarshalJSON() ([]byte, error) {
	if l == Never {
		return []byte(`"never"`), nil
	}
	return []byte(strconv.Itoa(int(l))), nil
}

func (l *Label) UnmarshalJSON(b []byte) error {
	if string(b) == `"never"` {
		*l = Never
		return nil
	}
	n, err := strconv.Atoi(string(b))
	if err != nil || n < 1 {
		return fmt.Errorf(`label: want a loop number from 1, or "never"; got %s`, b)
	}
	*l = Label(n)
	return nil
}

func (l Label) String() string {
	if l == Never {
		return "never"
	}
	return strconv.Itoa(int(l))
}

// Duration is a time.Duration written as "10m".
type Duration time.Duration

func (d Duration) MarshalJSON() ([]byte, error) { return json.Marshal(time.Duration(d).String()) }

func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("every: want a duration such as \"10m\"; got %s", b)
	}
	v, err := time.ParseDuration(s)
	if err != nil || v < 0 {
		return fmt.Errorf("every: want a duration such as \"10m\"; got %q", s)
	}
	*d = Duration(v)
	return nil
}

// Loops is the number of loops the history holds.
func (h *History) Loops() int {
	n := 0
	for _, r := range h.Runs {
		n += len(r.Loops)
	}
	return n
}

// Productive reports whether the history must never be stopped.
func (h *History) Productive() bool { return h.Label == Never }

// Read reads the history in path: a NAME.json file, or a directory
// holding history.json.
func Read(path string) (*History, error) {
	file := path
	if fi, err := os.Stat(path); err == nil && fi.IsDir() {
		file = filepath.Join(path, "history.json")
	}
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	h, err := Parse(file, b)
	if err != nil {
		return nil, err
	}
	h.Name, h.File = strings.TrimSuffix(filepath.Base(path), ".json"), file
	return h, nil
}

// Parse reads a history from b; file names it in errors, which give the
// line and column of what is wrong.
func Parse(file string, b []byte) (*History, error) {
	var h History
	d := json.NewDecoder(bytes.NewReader(b))
	d.DisallowUnknownFields()
	if err := d.Decode(&h); err != nil {
		return nil, fmt.Errorf("%s: %w", at(file, b, d.InputOffset(), err), err)
	}
	if err := h.check(); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	return &h, nil
}

// at names the place of a decoding error: file:line:col.
func at(file string, b []byte, off int64, err error) string {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		off = se.Offset - 1 // the offending byte
	case errors.As(err, &te):
		off = te.Offset
	default:
		// An unknown field, or a value its own type refused: the field
		// the message names.
		msg := err.Error()
		name, _, _ := strings.Cut(msg, ":")
		if i := strings.Index(msg, "unknown field "); i >= 0 {
			name = strings.Trim(msg[i+len("unknown field "):], `"`)
		}
		if i := bytes.Index(b, []byte(`"`+name+`"`)); name != "" && i >= 0 {
			off = int64(i)
		}
	}
	off = min(max(off, 0), int64(len(b)))
	line := 1 + bytes.Count(b[:off], []byte{'\n'})
	col := int(off) - bytes.LastIndexByte(b[:off], '\n')
	return fmt.Sprintf("%s:%d:%d", file, line, col)
}

// check finds what the engine could not play.
func (h *History) check() error {
	switch h.Kind {
	case KindRecorded, KindIncident, KindSynthetic:
	default:
		return fmt.Errorf("kind: want recorded, incident or synthetic; got %q", h.Kind)
	}
	if h.Start.IsZero() {
		return errors.New("start: missing (when the first run starts, RFC 3339)")
	}
	if len(h.Runs) == 0 {
		return errors.New("runs: none")
	}
	if int(h.Label) > h.Loops() {
		return fmt.Errorf("label: loop %d, but the history holds %d loops", h.Label, h.Loops())
	}
	for i, r := range h.Runs {
		if len(r.Loops) == 0 {
			return fmt.Errorf("run %d: no loops", i+1)
		}
		for j, l := range r.Loops {
			for _, p := range l.Person {
				if _, _, err := personAction(p); err != nil {
					return fmt.Errorf("run %d, loop %d: person: %w", i+1, j+1, err)
				}
			}
		}
	}
	return nil
}

// personAction splits what a person does into its verb and issue.
func personAction(p string) (verb, id string, err error) {
	verb, id, _ = strings.Cut(strings.TrimSpace(p), " ")
	switch verb {
	case "sentinel", "unsentinel":
		if id == "" {
			return verb, "", nil
		}
	case "retry", "skip", "resolve":
		if id != "" {
			return verb, id, nil
		}
	}
	return "", "", fmt.Errorf("%q: want sentinel, unsentinel, retry ID, skip ID or resolve ID", p)
}

// Corpus reads the histories at path: the one a file or a directory
// holding history.json is, or else each NAME.json and each directory
// holding history.json in the directory path, in name order.
func Corpus(path string) ([]*History, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if _, err := os.Stat(filepath.Join(path, "history.json")); !fi.IsDir() || err == nil {
		h, err := Read(path)
		if err != nil {
			return nil, err
		}
		return []*History{h}, nil
	}
	entries, err := readDir(path)
	if err != nil {
		return nil, err
	}
	var hs []*History
	for _, path := range entries {
		h, err := Read(path)
		if err != nil {
			return nil, err
		}
		hs = append(hs, h)
	}
	slices.SortFunc(hs, func(a, b *History) int { return strings.Compare(a.Name, b.Name) })
	return hs, nil
}

// readDir lists the histories in dir: NAME.json files and directories
// holding history.json; README and FORMAT files are its documents.
func readDir(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var paths []string
	for _, e := range entries {
		name := e.Name()
		path := filepath.Join(dir, name)
		switch {
		case strings.HasPrefix(name, "README") || strings.HasPrefix(name, "FORMAT") || strings.HasPrefix(name, "."):
		case e.IsDir():
			if _, err := os.Stat(filepath.Join(path, "history.json")); err != nil {
				return nil, fmt.Errorf("%s: a directory in a corpus holds history.json: %w", path, err)
			}
			paths = append(paths, path)
		case strings.HasSuffix(name, ".json"):
			paths = append(paths, path)
		default:
			return nil, fmt.Errorf("%s: not a history (NAME.json, or a directory with history.json)", path)
		}
	}
	return paths, nil
}
