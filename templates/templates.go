package templates

import (
	"bytes"
	"embed"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"text/template"
)

//go:embed *.tmpl
var embedded embed.FS

// dataTypes maps every template name to the type of its data.
var dataTypes = map[string]reflect.Type{
	"triggered":     reflect.TypeFor[Triggered](),
	"succeeded":     reflect.TypeFor[Succeeded](),
	"exhausted":     reflect.TypeFor[Exhausted](),
	"halted":        reflect.TypeFor[Halted](),
	"cap":           reflect.TypeFor[Cap](),
	"escalation":    reflect.TypeFor[Escalation](),
	"retry_context": reflect.TypeFor[RetryContext](),
	"summary":       reflect.TypeFor[RunSummary](),
	"issue":         reflect.TypeFor[NewIssue](),
}

// A Set renders the templates, each from its override file if there is one
// and from the embedded default otherwise. The zero Set renders the embedded
// templates without colour. Files are read at every Render, so an override
// edited while a run goes on takes effect at the next message.
type Set struct {
	// Dir holds the override files, normally <state dir>/templates: a file
	// NAME.tmpl there replaces the embedded template NAME. "" means none.
	Dir string
	// Color lets the color function emit ANSI colour codes. Without it the
	// output holds no escape sequence at all, whatever the data holds.
	Color bool
}

// Names returns the names of the templates, sorted.
func Names() []string {
	entries, _ := embedded.ReadDir(".") // cannot fail: the directory is embedded
	names := make([]string, 0, len(entries))
	for _, e := range entries {
		names = append(names, strings.TrimSuffix(e.Name(), ".tmpl"))
	}
	sort.Strings(names)
	return names
}

// Embedded returns the source of the embedded template name, as a starting
// point for an override.
func Embedded(name string) ([]byte, error) {
	if _, ok := dataTypes[name]; !ok {
		return nil, unknownTemplate(name)
	}
	return embedded.ReadFile(name + ".tmpl")
}

// Render executes the template name with data and writes the result to w.
// data must be the template's data type (see the package documentation) or
// a pointer to it. Invalid UTF-8 in the result is replaced by U+FFFD, and
// without Color every escape sequence is removed. On error nothing has been
// written to w; an override that cannot be read, parsed or executed gives an
// *OverrideError.
func (s *Set) Render(w io.Writer, name string, data any) error {
	out, err := s.render(name, data)
	if err != nil {
		return err
	}
	_, err = w.Write(out)
	return err
}

// Check reports, all at once, every override in Dir that Render could not
// use: a file that cannot be read or parsed, one that fails on
// representative data (say, a field or function that does not exist), and
// a .tmpl file that is named after no template. A missing Dir is fine.
// Callers run it before changing any state, so that a broken override
// stops a command before it has done anything.
func (s *Set) Check() error {
	if s.Dir == "" {
		return nil
	}
	entries, err := os.ReadDir(s.Dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("reading template overrides: %w", err)
	}
	var errs []error
	for _, e := range entries {
		name, ok := strings.CutSuffix(e.Name(), ".tmpl")
		if !ok {
			continue
		}
		if _, ok := dataTypes[name]; !ok {
			errs = append(errs, &OverrideError{
				Name: name,
				Path: filepath.Join(s.Dir, e.Name()),
				msg:  "no template is named " + strconv.Quote(name) + " (templates: " + strings.Join(Names(), ", ") + ")",
			})
			continue
		}
		for _, d := range samples()[name] {
			if _, err := s.render(name, d); err != nil {
				errs = append(errs, err)
				break
			}
		}
	}
	return errors.Join(errs...)
}

func (s *Set) render(name string, data any) ([]byte, error) {
	want, ok := dataTypes[name]
	if !ok {
		return nil, unknownTemplate(name)
	}
	if got := reflect.TypeOf(data); got != want && got != reflect.PointerTo(want) {
		return nil, fmt.Errorf("template %s: data is %v, want %v", name, got, want)
	}
	src, file, err := s.source(name)
	if err != nil {
		return nil, err
	}
	t, err := newTemplate(name, s.Color, string(src))
	if err == nil {
		var buf bytes.Buffer
		if err = t.Execute(&buf, data); err == nil {
			return clean(buf.Bytes(), s.Color), nil
		}
	}
	if file == "" {
		return nil, fmt.Errorf("rendering %s: %w", name, err)
	}
	return nil, newOverrideError(name, file, err)
}

// source returns the text of template name and the override file it comes
// from, "" for the embedded one.
func (s *Set) source(name string) ([]byte, string, error) {
	if s.Dir != "" {
		file := filepath.Join(s.Dir, name+".tmpl")
		src, err := os.ReadFile(file)
		if err == nil {
			return src, file, nil
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return nil, "", newOverrideError(name, file, err)
		}
	}
	src, err := embedded.ReadFile(name + ".tmpl")
	return src, "", err
}

func newTemplate(name string, color bool, src string) (*template.Template, error) {
	return template.New(name).Funcs(funcs(color)).Option("missingkey=error").Parse(src)
}

func unknownTemplate(name string) error {
	return fmt.Errorf("unknown template %q (templates: %s)", name, strings.Join(Names(), ", "))
}

// An OverrideError reports an override file that cannot be used. Its message
// names the file and, for template errors, the line (and column) in it:
//
//	.orchestrator/templates/triggered.tmpl:3: function "colour" not defined
type OverrideError struct {
	Name      string // the template, e.g. "triggered"
	Path      string // the override file
	Line, Col int    // position in the file, 0 when unknown
	Err       error  // the underlying error
	msg       string
}

func (e *OverrideError) Error() string {
	switch {
	case e.Line > 0 && e.Col > 0:
		return fmt.Sprintf("%s:%d:%d: %s", e.Path, e.Line, e.Col, e.msg)
	case e.Line > 0:
		return fmt.Sprintf("%s:%d: %s", e.Path, e.Line, e.msg)
	}
	return e.Path + ": " + e.msg
}

func (e *OverrideError) Unwrap() error { return e.Err }

// newOverrideError turns text/template's "template: NAME:LINE[:COL]: MSG"
// into a position in the file and MSG.
func newOverrideError(name, file string, err error) *OverrideError {
	e := &OverrideError{Name: name, Path: file, Err: err, msg: err.Error()}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		e.msg = pe.Err.Error()
		return e
	}
	rest, ok := strings.CutPrefix(e.msg, "template: "+name+":")
	if !ok {
		return e
	}
	var nums []int
	for len(nums) < 2 {
		digits, after, found := strings.Cut(rest, ":")
		n, convErr := strconv.Atoi(digits)
		if !found || convErr != nil {
			break
		}
		nums = append(nums, n)
		rest = after
	}
	if len(nums) == 0 {
		return e
	}
	e.Line = nums[0]
	if len(nums) == 2 {
		e.Col = nums[1]
	}
	e.msg = strings.TrimPrefix(rest, " ")
	return e
}

// clean makes rendered output safe to show: valid UTF-8, and without colour
// no escape sequences, not even ones that came in with the data (coloured
// test output in FailureDetails).
func clean(b []byte, color bool) []byte {
	if !color {
		b = stripEscapes(b)
	}
	return bytes.ToValidUTF8(b, []byte("\uFFFD"))
}

const esc = 0x1b

// stripEscapes removes ANSI escape sequences — CSI ("ESC [ … final"),
// string sequences (OSC, DCS, …, up to BEL, ST or the end of the line) and
// short "ESC intermediates final" ones — and then any ESC byte left.
func stripEscapes(b []byte) []byte {
	if bytes.IndexByte(b, esc) < 0 {
		return b
	}
	out := make([]byte, 0, len(b))
	for i := 0; i < len(b); {
		if b[i] != esc {
			out = append(out, b[i])
			i++
			continue
		}
		i++
		if i == len(b) {
			break
		}
		switch b[i] {
		case '[':
			i++
			for i < len(b) && b[i] >= 0x20 && b[i] <= 0x3f {
				i++
			}
			if i < len(b) && b[i] >= 0x40 && b[i] <= 0x7e {
				i++
			}
		case ']', 'P', 'X', '^', '_':
			i++
			for i < len(b) && b[i] != '\n' {
				if b[i] == 0x07 {
					i++
					break
				}
				if b[i] == esc && i+1 < len(b) && b[i+1] == '\\' {
					i += 2
					break
				}
				i++
			}
		default:
			for i < len(b) && b[i] >= 0x20 && b[i] <= 0x2f {
				i++
			}
			if i < len(b) && b[i] >= 0x30 && b[i] <= 0x7e {
				i++
			}
		}
	}
	return out
}
