package signature

import (
	"bytes"
	"strings"
	"testing"
)

// TestClassifyFirstBytes checks the lists of first bytes that classify
// dispatches on: a runner's rules know no line that starts with a byte
// missing from its list. Every line of the corpus, as the line rules make
// it, is tried; and each that a runner knows is tried again with every
// other first byte, and after every byte.
func TestClassifyFirstBytes(t *testing.T) {
	rules := []struct {
		name, first string
		knows       func(t []byte) bool
	}{
		{"isRule", ruleFirst, isRule},
		{"go", goFirst, func(t []byte) bool { _, _, ok := classifyGo(t, t, 0); return ok }},
		{"go indented", goFirst, func(t []byte) bool { _, _, ok := classifyGo(t, append([]byte("    "), t...), 4); return ok }},
		{"python", pythonFirst, func(t []byte) bool { _, _, ok := classifyPython(t); return ok }},
		{"cargo", cargoFirst, func(t []byte) bool { _, _, ok := classifyCargo(t, 0); return ok }},
		{"cargo indented", cargoFirst, func(t []byte) bool { _, _, ok := classifyCargo(t, 4); return ok }},
		{"js", jsFirst, func(t []byte) bool { _, _, ok := classifyJS(t, 0); return ok }},
		{"js indented", jsFirst, func(t []byte) bool { _, _, ok := classifyJS(t, 4); return ok }},
		{"java", javaFirst, func(t []byte) bool { _, _, ok := classifyJava(t); return ok }},
	}
	lines := map[string]bool{}
	r := compileSet(t, V3, "")
	for _, set := range corpusSets {
		for _, p := range readCorpus(t, set) {
			for _, bug := range p.bugs {
				for _, out := range bug.out {
					// The line rules' way, without the report rules.
					w := r.sc
					w.v2 = false
					var norm []byte
					for line := range bytes.Lines(out) {
						norm, _ = w.appendLine(norm[:0], StripANSI(nil, bytes.TrimSuffix(line, []byte("\n"))), false)
						if len(norm) > 0 {
							lines[string(norm)] = true
						}
					}
				}
			}
		}
	}
	if len(lines) < 10000 {
		t.Fatalf("only %d lines to try", len(lines))
	}
	known := map[string]bool{}
	for _, rule := range rules {
		for line := range lines {
			if rule.knows([]byte(line)) {
				if strings.IndexByte(rule.first, line[0]) < 0 {
					t.Fatalf("%s knows %q, whose first byte is not in its list %q", rule.name, line, rule.first)
				}
				// The rules read a line's start and end.
				if len(line) > 16 {
					line = line[:10] + line[len(line)-6:]
				}
				known[line] = true
			}
		}
	}
	t.Logf("%d lines, %d known", len(lines), len(known))
	if len(known) < 100 {
		t.Fatalf("only %d lines known to try", len(known))
	}
	for _, rule := range rules {
		for line := range known {
			for c := range 256 {
				if strings.IndexByte(rule.first, byte(c)) >= 0 {
					continue
				}
				for _, l := range []string{string([]byte{byte(c)}) + line[1:], string([]byte{byte(c)}) + line} {
					if rule.knows([]byte(l)) {
						t.Fatalf("%s knows %q, whose first byte is not in its list %q", rule.name, l, rule.first)
					}
				}
			}
		}
	}
}
