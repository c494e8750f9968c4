package issuequeue

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/txtar"
)

var update = flag.Bool("u", false, "rewrite the expected output of the golden write-back tests")

// TestEditGolden runs the write-back tests in testdata/edit. Each archive
// holds the file to edit (queue.md or state.md), the edits (one per line of
// "edits", see parseEdit) and the expected result (want.md). Options in
// "edits" turn the input into a CRLF file (option crlf; want.md is then
// compared after checking that every line of the output ends in CRLF) or a
// file without a final newline (option noeol; want.md's final newline is
// not expected either).
func TestEditGolden(t *testing.T) {
	files, err := filepath.Glob("testdata/edit/*.txtar")
	if err != nil || len(files) == 0 {
		t.Fatalf("no golden files: %v", err)
	}
	for _, name := range files {
		t.Run(strings.TrimSuffix(filepath.Base(name), ".txtar"), func(t *testing.T) {
			runGolden(t, name)
		})
	}
}

func runGolden(t *testing.T, name string) {
	ar, err := txtar.ParseFile(name)
	if err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{}
	for _, f := range ar.Files {
		files[f.Name] = f.Data
	}
	var crlf, noeol bool
	var wantErr string
	var edits []Edit
	for i, line := range strings.Split(string(files["edits"]), "\n") {
		if strings.TrimSpace(line) == "" || strings.HasPrefix(line, "#") {
			continue
		}
		args, err := splitArgs(line, files)
		if err != nil {
			t.Fatalf("edits:%d: %v", i+1, err)
		}
		switch args[0] {
		case "option":
			crlf = crlf || args[1] == "crlf"
			noeol = noeol || args[1] == "noeol"
			continue
		case "error":
			wantErr = args[1]
			continue
		}
		e, err := parseEdit(args)
		if err != nil {
			t.Fatalf("edits:%d: %v", i+1, err)
		}
		edits = append(edits, e)
	}
	shape := func(b []byte) []byte {
		if crlf {
			b = bytes.ReplaceAll(b, []byte("\n"), []byte("\r\n"))
		}
		if noeol {
			b = bytes.TrimSuffix(bytes.TrimSuffix(b, []byte("\n")), []byte("\r"))
		}
		return b
	}

	var out []byte
	var reparse func([]byte) *doc
	if in, ok := files["state.md"]; ok {
		st := ParseState("state.md", shape(in))
		out, err = st.Apply(edits...)
		reparse = func(b []byte) *doc { return ParseState("state.md", b).d }
	} else {
		q := ParseQueue("queue.md", shape(files["queue.md"]))
		out, err = q.Apply(edits...)
		reparse = func(b []byte) *doc { return ParseQueue("queue.md", b).d }
	}
	if wantErr != "" {
		if err == nil || !strings.Contains(err.Error(), wantErr) {
			t.Fatalf("Apply error = %v, want one containing %q", err, wantErr)
		}
		return
	}
	if err != nil {
		t.Fatalf("Apply: %v", err)
	}

	got := out
	if crlf {
		if bare := bytes.Count(out, []byte("\n")) - bytes.Count(out, []byte("\r\n")); bare != 0 {
			t.Errorf("%d lines of the output of a CRLF file end in a bare LF:\n%q", bare, out)
		}
		got = bytes.ReplaceAll(out, []byte("\r\n"), []byte("\n"))
	}
	if noeol {
		if bytes.HasSuffix(out, []byte("\n")) {
			t.Errorf("output of a file without a final newline ends in one")
		}
		got = append(got, '\n')
	}
	if *update {
		for i := range ar.Files {
			if ar.Files[i].Name == "want.md" {
				ar.Files[i].Data = got
			}
		}
		if err := os.WriteFile(name, txtar.Format(ar), 0o666); err != nil {
			t.Fatal(err)
		}
		return
	}
	if want := files["want.md"]; !bytes.Equal(got, want) {
		t.Errorf("output differs from want.md (run with -u to accept):\n%s", lineDiff(string(want), string(got)))
	}

	// Whatever was written reads back as written, and the result is valid
	// if the input was.
	d := reparse(out)
	if before := reparse(shape(firstOf(files["queue.md"], files["state.md"]))); len(before.errs()) == 0 && len(d.errs()) > 0 {
		t.Errorf("edits made a valid file invalid: %q", findingStrings(d.errs()))
	}
	checkReadBack(t, d, edits)
}

func firstOf(a, b []byte) []byte {
	if a != nil {
		return a
	}
	return b
}

// checkReadBack checks that the fields and sections the edits set read
// back from the edited file as they were set.
func checkReadBack(t *testing.T, d *doc, edits []Edit) {
	t.Helper()
	for _, e := range edits {
		r := d.byKey[e.key]
		if e.kind == editRemove {
			if r != nil {
				t.Errorf("%s still there after RemoveIssue", e.key)
			}
			continue
		}
		if r == nil {
			t.Errorf("%s not found after the edit", e.key)
			continue
		}
		switch e.kind {
		case editField:
			if got, ok := d.field(r, e.name); !ok || got != cellReadBack(e.value) {
				t.Errorf("%s %s reads back as %q, %t; want %q", e.key, e.name, got, ok, cellReadBack(e.value))
			}
		case editSection:
			if got, ok := d.sectionText(r, e.name); !ok || got != sectionReadBack(e) {
				t.Errorf("%s %s reads back as %q, %t; want %q", e.key, e.name, got, ok, sectionReadBack(e))
			}
		}
	}
}

// cellReadBack is what a value written into a cell reads back as: line
// breaks became spaces, and cells are trimmed.
func cellReadBack(v string) string {
	v = strings.ToValidUTF8(v, "\uFFFD")
	v = strings.NewReplacer("\r\n", " ", "\n", " ", "\r", " ").Replace(v)
	return strings.Trim(v, " \t")
}

// sectionReadBack is what the text of a section edit reads back as.
func sectionReadBack(e Edit) string {
	if e.fenced {
		return strings.TrimRight(normalizeNewlines(e.value), "\n")
	}
	return strings.Trim(normalizeNewlines(e.value), "\n \t")
}

// splitArgs splits an edit line into words; a word may be a Go quoted
// string, and @name stands for the content of the archive's file name.
func splitArgs(line string, files map[string][]byte) ([]string, error) {
	var args []string
	for line = strings.TrimLeft(line, " "); line != ""; line = strings.TrimLeft(line, " ") {
		var w string
		switch {
		case line[0] == '"':
			q, err := strconv.QuotedPrefix(line)
			if err != nil {
				return nil, err
			}
			w, _ = strconv.Unquote(q)
			line = line[len(q):]
		default:
			w, line, _ = strings.Cut(line, " ")
			if strings.HasPrefix(w, "@") {
				b, ok := files[w[1:]]
				if !ok {
					return nil, fmt.Errorf("no file %s in the archive", w[1:])
				}
				w = string(b)
			}
		}
		args = append(args, w)
	}
	return args, nil
}

// parseEdit makes an Edit of the words of one line:
//
//	set ID FIELD VALUE          SetField
//	state SECTION FIELD VALUE   SetField on a session state section
//	section ID NAME TEXT        SetSection
//	fenced ID NAME TEXT         setSectionFenced
//	markdown ID NAME TEXT       SetSectionMarkdown
//	row ID NAME H1|H2 C1|C2     AppendRow (\| is a pipe in a cell)
//	append ID TEXT              AppendIssue
//	remove ID                   RemoveIssue
func parseEdit(a []string) (Edit, error) {
	want := map[string]int{"set": 4, "state": 4, "section": 4, "fenced": 4, "markdown": 4, "row": 5, "append": 3, "remove": 2}
	n, ok := want[a[0]]
	if !ok {
		return Edit{}, fmt.Errorf("unknown edit %q", a[0])
	}
	if len(a) != n {
		return Edit{}, fmt.Errorf("%s takes %d words, got %d: %q", a[0], n-1, len(a)-1, a[1:])
	}
	switch a[0] {
	case "set", "state":
		return SetField(a[1], a[2], a[3]), nil
	case "section":
		return SetSection(a[1], a[2], a[3]), nil
	case "fenced":
		return setSectionFenced(a[1], a[2], a[3]), nil
	case "markdown":
		return SetSectionMarkdown(a[1], a[2], a[3]), nil
	case "row":
		return AppendRow(a[1], a[2], splitCells(a[3]), splitCells(a[4])), nil
	case "append":
		return AppendIssue(a[1], a[2]), nil
	}
	return RemoveIssue(a[1]), nil
}

// splitCells splits a|b|c into cells; \| is a pipe inside a cell.
func splitCells(s string) []string {
	cells := strings.Split(strings.ReplaceAll(s, `\|`, "\x00"), "|")
	for i, c := range cells {
		cells[i] = strings.ReplaceAll(c, "\x00", "|")
	}
	return cells
}

// lineDiff shows the lines where want and got first differ, with context.
func lineDiff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	i := 0
	for i < len(w) && i < len(g) && w[i] == g[i] {
		i++
	}
	from := max(0, i-3)
	var b strings.Builder
	fmt.Fprintf(&b, "first difference at line %d\n", i+1)
	for k := from; k < min(len(w), i+4); k++ {
		fmt.Fprintf(&b, "want %3d: %q\n", k+1, w[k])
	}
	for k := from; k < min(len(g), i+4); k++ {
		fmt.Fprintf(&b, "got  %3d: %q\n", k+1, g[k])
	}
	return b.String()
}
