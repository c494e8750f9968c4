package orchestrator

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// isGovernor reports whether path is one of the governor's files, where
// stops are built and worded and halts decided.
func isGovernor(path string) bool {
	return filepath.Base(filepath.Dir(path)) == "orchestrator" && filepath.Base(filepath.Dir(filepath.Dir(path))) != "cmd" &&
		strings.HasPrefix(filepath.Base(path), "governor")
}

// The governor is the one decision point: no code outside
// orchestrator/governor*.go builds a stop (a StopError literal), words one
// ("stopped ("), decides a halt (sets Halted to true) or releases one (an
// edit setting the Halted field to false). Tests may.
func TestOnlyTheGovernorStopsAndHalts(t *testing.T) {
	root := ".."
	fset := token.NewFileSet()
	var found []string
	at := func(n ast.Node, what string) {
		p := fset.Position(n.Pos())
		found = append(found, p.Filename+":"+strconv.Itoa(p.Line)+": "+what)
	}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); path != root && (strings.HasPrefix(name, ".") || name == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") || isGovernor(path) {
			return nil
		}
		// replay writes the queue a simulation starts from, as it was
		// before the recorded loops, into its own temporary directory:
		// no release of anyone's halt.
		simulation := filepath.ToSlash(filepath.Dir(path)) == "../internal/views/replay"
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			switch x := n.(type) {
			case *ast.CompositeLit:
				if typeName(x.Type) == "StopError" {
					at(x, "builds a StopError: build stops in governor_stops.go")
				}
				var haltedField, falseValue bool
				for _, e := range x.Elts {
					if kv, ok := e.(*ast.KeyValueExpr); ok && identName(kv.Key) == "Halted" && isTrue(kv.Value) {
						at(kv, "sets Halted: halts are decided by Halt in governor_halt.go")
					}
					if kv, ok := e.(*ast.KeyValueExpr); ok {
						haltedField = haltedField || identName(kv.Key) == "Field" && typeName(kv.Value) == "FieldHalted"
						falseValue = falseValue || identName(kv.Key) == "Value" && isFalse(kv.Value)
					}
				}
				if haltedField && falseValue {
					at(x, "releases a halt: releases are decided by ReleaseHalt in governor_release.go")
				}
			case *ast.BasicLit:
				if s, err := strconv.Unquote(x.Value); err == nil && x.Kind == token.STRING && strings.Contains(s, "stopped (") {
					at(x, `words "stopped (": use Stopped or StopError in governor_stops.go`)
				}
			case *ast.AssignStmt:
				for i, l := range x.Lhs {
					if sel, ok := l.(*ast.SelectorExpr); ok && sel.Sel.Name == "Halted" && i < len(x.Rhs) && isTrue(x.Rhs[i]) {
						at(x, "sets Halted: halts are decided by Halt in governor_halt.go")
					}
				}
			case *ast.CallExpr:
				if typeName(x.Fun) == "SetField" && len(x.Args) == 3 && typeName(x.Args[1]) == "FieldHalted" && isTrue(x.Args[2]) {
					at(x, "sets Halted: halts are decided by Halt in governor_halt.go")
				}
				if typeName(x.Fun) == "SetField" && len(x.Args) == 3 && typeName(x.Args[1]) == "FieldHalted" && isFalse(x.Args[2]) && !simulation {
					at(x, "releases a halt: releases are decided by ReleaseHalt in governor_release.go")
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(found) > 0 {
		t.Errorf("outside orchestrator/governor*.go:\n%s", strings.Join(found, "\n"))
	}
}

// typeName is the name an expression ends with: StopError for
// StopError, orchestrator.StopError or *StopError.
func typeName(e ast.Expr) string {
	switch x := e.(type) {
	case *ast.Ident:
		return x.Name
	case *ast.SelectorExpr:
		return x.Sel.Name
	case *ast.StarExpr:
		return typeName(x.X)
	}
	return ""
}

func identName(e ast.Expr) string {
	if id, ok := e.(*ast.Ident); ok {
		return id.Name
	}
	return ""
}

// isTrue reports whether e is the literal true, or the string "true".
func isTrue(e ast.Expr) bool {
	if id, ok := e.(*ast.Ident); ok {
		return id.Name == "true"
	}
	if bl, ok := e.(*ast.BasicLit); ok && bl.Kind == token.STRING {
		s, _ := strconv.Unquote(bl.Value)
		return s == "true"
	}
	return false
}

func isFalse(e ast.Expr) bool {
	if id, ok := e.(*ast.Ident); ok {
		return id.Name == "false"
	}
	if bl, ok := e.(*ast.BasicLit); ok && bl.Kind == token.STRING {
		s, _ := strconv.Unquote(bl.Value)
		return s == "false"
	}
	return false
}

// docs/stop-codes.md and the governor name the same reason codes: every
// code the governor declares is documented in its tables, and every code
// documented there is one the governor declares.
func TestStopCodesDocumented(t *testing.T) {
	fset := token.NewFileSet()
	files, err := filepath.Glob("governor*.go")
	if err != nil {
		t.Fatal(err)
	}
	var codes []string
	for _, path := range files {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			gd, ok := d.(*ast.GenDecl)
			if !ok || gd.Tok != token.CONST {
				continue
			}
			for _, s := range gd.Specs {
				vs := s.(*ast.ValueSpec)
				if identName(vs.Type) != "Code" {
					continue
				}
				for _, v := range vs.Values {
					if bl, ok := v.(*ast.BasicLit); ok {
						c, _ := strconv.Unquote(bl.Value)
						codes = append(codes, c)
					}
				}
			}
		}
	}
	b, err := os.ReadFile(filepath.Join("..", "docs", "stop-codes.md"))
	if err != nil {
		t.Fatal(err)
	}
	// The code tables: the rows of "## The codes", up to the next section.
	text := string(b)
	start := strings.Index(text, "\n## The codes")
	if start < 0 {
		t.Fatal(`docs/stop-codes.md has no "## The codes" section`)
	}
	text = text[start+1:]
	if end := strings.Index(text[3:], "\n## "); end >= 0 {
		text = text[:end+3]
	}
	var documented []string
	for _, m := range regexp.MustCompile("(?m)^\\| `([a-z_]+)` \\|").FindAllStringSubmatch(text, -1) {
		documented = append(documented, m[1])
	}
	if len(codes) < 20 || len(documented) < 20 {
		t.Fatalf("found %d codes in the governor and %d in docs/stop-codes.md: the scan is broken", len(codes), len(documented))
	}
	for _, c := range codes {
		if !slices.Contains(documented, c) {
			t.Errorf("reason code %q (orchestrator/governor*.go) is not in the tables of docs/stop-codes.md", c)
		}
	}
	for _, c := range documented {
		if !slices.Contains(codes, c) {
			t.Errorf("docs/stop-codes.md documents %q, which the governor does not declare", c)
		}
	}
}
