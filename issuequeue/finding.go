package issuequeue

import (
	"fmt"
	"sort"
	"strings"
)

// Finding is one problem in a state file, at a line and column (1-based).
// Warnings are reported by lint but do not stop the file from being changed.
type Finding struct {
	File      string
	Line, Col int
	Msg       string
	Warning   bool
}

func (f Finding) String() string {
	w := ""
	if f.Warning {
		w = "warning: "
	}
	return fmt.Sprintf("%s:%d:%d: %s%s", f.File, f.Line, f.Col, w, f.Msg)
}

// ValidationError reports a state file that a command refused to change. It
// lists every error-level finding of the file.
type ValidationError struct {
	File     string
	Findings []Finding
}

func (e *ValidationError) Error() string {
	var b strings.Builder
	for i, f := range e.Findings {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(f.String())
	}
	return b.String()
}

// errs returns the error-level findings.
func (d *doc) errs() []Finding {
	var out []Finding
	for _, f := range d.findings {
		if !f.Warning {
			out = append(out, f)
		}
	}
	return out
}

// QuarantinedError reports a command's refusal to act on an issue that has
// errors of its own. Nothing was written.
type QuarantinedError struct {
	File, Key string
	Findings  []Finding
}

func (e *QuarantinedError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s is not valid, so it is left alone; nothing was written:", e.Key)
	for _, f := range e.Findings {
		b.WriteString("\n")
		b.WriteString(f.String())
	}
	return b.String()
}

func (d *doc) quarantinedError(r *record) error {
	return &QuarantinedError{File: d.name, Key: r.key, Findings: r.errs}
}

// validationError returns a *ValidationError of the errors of file, if any.
func validationError(file string, errs []Finding) error {
	if len(errs) > 0 {
		return &ValidationError{File: file, Findings: errs}
	}
	return nil
}

func sortFindings(fs []Finding) {
	sort.SliceStable(fs, func(i, j int) bool {
		if fs[i].Line != fs[j].Line {
			return fs[i].Line < fs[j].Line
		}
		return fs[i].Col < fs[j].Col
	})
}
