package issuequeue

import (
	"bytes"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/txtar"
)

// goldenInputs returns the files the golden write-back tests edit, the
// examples, and the scanner seeds: the seed corpus of the parser fuzzers.
func goldenInputs(t testing.TB) [][]byte {
	out := [][]byte{readExample(t, "issue_queue.md"), readExample(t, "session_state.md")}
	files, _ := filepath.Glob("testdata/edit/*.txtar")
	for _, name := range files {
		ar, err := txtar.ParseFile(name)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range ar.Files {
			if strings.HasSuffix(f.Name, ".md") {
				out = append(out, f.Data)
			}
		}
	}
	for _, s := range scanSeeds {
		out = append(out, []byte(s))
	}
	return out
}

// FuzzParse: the parsers never panic, every finding points into the file,
// and applying no edits gives back the input byte for byte.
func FuzzParse(f *testing.F) {
	for _, b := range goldenInputs(f) {
		f.Add(b)
		f.Add(bytes.ReplaceAll(b, []byte("\n"), []byte("\r\n")))
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		q := ParseQueue("issue_queue.md", src)
		if out, err := q.Apply(); err != nil || !bytes.Equal(out, src) {
			t.Fatalf("Queue.Apply() = %q, %v; want the input", out, err)
		}
		st := ParseState("session_state.md", src)
		if out, err := st.Apply(); err != nil || !bytes.Equal(out, src) {
			t.Fatalf("State.Apply() = %q, %v; want the input", out, err)
		}
		lines := bytes.Count(src, []byte{'\n'}) + 1
		for _, fd := range append(q.Findings(), st.Findings()...) {
			if fd.Line < 1 || fd.Line > lines || fd.Col < 1 {
				t.Fatalf("finding outside the file (%d lines): %v", lines, fd)
			}
		}
		for _, is := range q.Issues {
			_ = is.Summary()
			for _, name := range []string{SectionFailureDetails, SectionAttemptHistory} {
				_, _ = is.Section(name)
				_, _, _ = is.Table(name)
			}
			if is.Status == "" || is.Priority == "" || is.Type == "" {
				t.Fatalf("%s: a field has no value and no default: %+v", is.ID, is)
			}
		}
		_ = q.NextID(time.Now())

		// Read as an archive, the same bytes have the same issues, each
		// copy of a repeated ID among them, and a lookup gives the last.
		a := ParseArchive("issue_archive.md", src)
		if out, err := a.Apply(); err != nil || !bytes.Equal(out, src) {
			t.Fatalf("archive Apply() = %q, %v; want the input", out, err)
		}
		if len(a.Issues)+len(a.Quarantined) != len(q.Issues)+len(q.Quarantined) || len(a.Issues) < len(q.Issues) {
			t.Fatalf("archive: %d valid, %d quarantined; queue: %d valid, %d quarantined",
				len(a.Issues), len(a.Quarantined), len(q.Issues), len(q.Quarantined))
		}
		last := map[string]*Issue{}
		for _, is := range a.all {
			last[is.ID] = is
		}
		for id, is := range last {
			if got := a.Issue(id); got != nil && got != is || got == nil && !is.r.quarantined() {
				t.Fatalf("archive lookup of %s gives the copy at line %v, want line %d", id, got, is.Line)
			}
		}
		// Archiving a copy of an issue the archive holds adds nothing; it
		// is found again as it was.
		if a.Err() == nil {
			for _, is := range a.Issues {
				m := intentMove{ID: is.ID, Block: string(a.IssueSource(is.ID))}
				if a.copyOf(m) == nil {
					t.Fatalf("the archive's own copy of %s is not found as a copy", is.ID)
				}
			}
		}
	})
}

// fieldsOf returns every field of every issue, as "ID field=value" lines,
// and the issue IDs in order.
func fieldsOf(q *Queue) string { return fieldsWith(q, "", "", "") }

// fieldsWith is fieldsOf with the value of field name of issue id replaced.
func fieldsWith(q *Queue, id, name, value string) string {
	var b strings.Builder
	for _, is := range q.Issues {
		fmt.Fprintf(&b, "%s\n", is.ID)
		t := is.q.d.table(is.r)
		if t == nil {
			continue
		}
		for _, rw := range t.rows {
			field := ""
			if len(rw.cells) > 0 {
				field = q.d.s.cellText(rw.cells[0])
			}
			v, _ := is.Field(field)
			if is.ID == id && strings.EqualFold(field, name) {
				v = value
			}
			fmt.Fprintf(&b, "  %s=%q\n", field, v)
		}
	}
	return b.String()
}

// editQueue is the example queue plus a table without padding around the
// cells, so that values land right next to pipes.
func editQueue(t testing.TB) []byte {
	return append(readExample(t, "issue_queue.md"), "\n## ISSUE-20261122-003\n\n|Field|Value|\n|-|-|\n|Category|x|\n|Note||\n|Source|\n"...)
}

// FuzzEditLocal: setting an existing cell changes only that cell's bytes,
// the value reads back as set, and no other field of any issue changes.
func FuzzEditLocal(f *testing.F) {
	for _, v := range []string{"in_progress", "", " ", "a | b", `C:\dir\`, `\|`, "`a|b`", "<!-- x", "one\ntwo\r\nthree\rfour", "## ISSUE-20261122-009", "| Status | resolved |", "\\", "\x00\xff", "  padded  "} {
		for pick := range uint(8) {
			f.Add(v, pick, false)
			f.Add(v, pick, true)
		}
	}
	f.Fuzz(func(t *testing.T, value string, pick uint, crlf bool) {
		src := editQueue(t)
		if crlf {
			src = bytes.ReplaceAll(src, []byte("\n"), []byte("\r\n"))
		}
		q := ParseQueue("issue_queue.md", src)
		if err := q.Err(); err != nil {
			t.Fatal(err)
		}
		// Free-text fields, so that any value is valid.
		type target struct {
			is   *Issue
			name string
			c    cell
		}
		var targets []target
		for _, is := range q.Issues {
			for _, name := range []string{FieldCategory, FieldSource, FieldVerify, "Note"} {
				i := fieldIndex(is.q.d, is.r, name)
				if i < 0 {
					continue
				}
				if rw := is.q.d.table(is.r).rows[i]; len(rw.cells) >= 2 && !rw.cells[1].missing {
					targets = append(targets, target{is, name, rw.cells[1]})
				}
			}
		}
		tg := targets[pick%uint(len(targets))]
		out, err := q.Apply(SetField(tg.is.ID, tg.name, value))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.HasPrefix(out, src[:tg.c.start]) || !bytes.HasSuffix(out, src[tg.c.end:]) {
			t.Fatalf("setting %s %s to %q changed bytes outside the cell %d:%d:\n%q", tg.is.ID, tg.name, value, tg.c.start, tg.c.end, out)
		}
		q2 := ParseQueue("issue_queue.md", out)
		if err := q2.Err(); err != nil {
			t.Fatalf("setting %s %s to %q made the queue invalid: %v\n%s", tg.is.ID, tg.name, value, err, out)
		}
		if got, ok := q2.Issue(tg.is.ID).Field(tg.name); !ok || got != cellReadBack(value) {
			t.Fatalf("%s %s reads back as %q, %t; want %q", tg.is.ID, tg.name, got, ok, cellReadBack(value))
		}
		want := fieldsWith(q, tg.is.ID, tg.name, cellReadBack(value))
		if got := fieldsOf(q2); got != want {
			t.Fatalf("fields after setting %s %s to %q:\n%s\nwant:\n%s", tg.is.ID, tg.name, value, got, want)
		}
	})
}

// FuzzSectionText: no text written into a section can create, remove or
// alter an issue or any field, or make the file invalid; the section reads
// back as the text.
func FuzzSectionText(f *testing.F) {
	for _, s := range []string{
		"plain", "```\n## ISSUE-20261122-009\n```", "~~~\n## ISSUE-20261122-009", "<!--\n## ISSUE-20261122-009\n", "<!--",
		"| Status | resolved |", "line\r\n## ISSUE-20261122-009\r| Status | resolved |", "nul\x00byte", "bad \xff\xfe utf-8",
		"````` \n``\n", "    indented\n## ISSUE-20261122-001", "ISSUE-20261122-009\n---", "-", "+", "1.", "<div>", "[x]: /u",
		"\n\n\nblank lines\n\n\n", "", "   ", "\ttab", "\uFEFF## ISSUE-20261122-009", "### Attempt History",
	} {
		for pick := range uint(6) {
			f.Add(s, pick, true, false)
			f.Add(s, pick, false, true)
		}
	}
	f.Fuzz(func(t *testing.T, text string, pick uint, fenced, crlf bool) {
		src := readExample(t, "issue_queue.md")
		if crlf {
			src = bytes.ReplaceAll(src, []byte("\n"), []byte("\r\n"))
		}
		q := ParseQueue("issue_queue.md", src)
		sections := []string{SectionSummary, SectionFailureDetails, SectionVerification, SectionAttemptHistory, SectionFixInstruction, "New Section"}
		is := q.Issues[pick%uint(len(q.Issues))]
		name := sections[(pick/2)%uint(len(sections))]
		e := SetSection(is.ID, name, text)
		if fenced {
			e = setSectionFenced(is.ID, name, text)
		}
		out, err := q.Apply(e)
		if err != nil {
			t.Fatal(err)
		}
		q2 := ParseQueue("issue_queue.md", out)
		if err := q2.Err(); err != nil {
			t.Fatalf("writing %q into %s %s made the queue invalid: %v\n%s", text, is.ID, name, err, out)
		}
		if got, want := fieldsOf(q2), fieldsOf(q); got != want {
			t.Fatalf("writing %q into %s %s changed the issues:\n%s\nwant:\n%s", text, is.ID, name, got, want)
		}
		if len(q2.Findings()) != len(q.Findings()) {
			t.Fatalf("writing %q into %s %s added findings: %q", text, is.ID, name, findingStrings(q2.Findings()))
		}
		if got, ok := q2.Issue(is.ID).Section(name); !ok || got != sectionReadBack(e) {
			t.Fatalf("%s %s reads back as %q, %t; want %q\n%s", is.ID, name, got, ok, sectionReadBack(e), out)
		}
		for _, other := range q.Issues {
			for _, sn := range sections {
				if other.ID == is.ID && sn == name {
					continue
				}
				a, aok := other.Section(sn)
				b, bok := q2.Issue(other.ID).Section(sn)
				if a != b || aok != bok {
					t.Fatalf("writing %q into %s %s changed %s %s from %q to %q", text, is.ID, name, other.ID, sn, a, b)
				}
			}
		}
	})
}
