package example

import (
	"go/build"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestLayers proves what ARCHITECTURE.md states of the code's layers: every
// package of the tool belongs to one layer of the list in its "Layers"
// section, and imports only packages of its own layer or of layers listed
// after it; the test helpers are imported by no package of the tool.
func TestLayers(t *testing.T) {
	layers := readLayers(t)
	const module = "github.com/autoretry/orchestrator"
	layerOf := func(pkg string) int {
		found := -1
		for i, l := range layers {
			if dir, ok := strings.CutSuffix(l, "/*"); l == pkg || ok && (pkg == dir || strings.HasPrefix(pkg, dir+"/")) {
				if found >= 0 {
					t.Errorf("%s is in two layers: %q and %q", pkg, layers[found], l)
				}
				found = i
			}
		}
		return found
	}
	checked := 0
	err := filepath.WalkDir(".", func(dir string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return err
		}
		switch name := d.Name(); {
		case dir == ".":
		case name == "testdata" || strings.HasPrefix(name, ".") || dir == "bench" || dir == "deploy" || dir == "scripts":
			return filepath.SkipDir
		}
		p, err := build.ImportDir(dir, 0)
		if _, ok := err.(*build.NoGoError); ok {
			return nil
		}
		if err != nil {
			return err
		}
		pkg := filepath.ToSlash(dir)
		if strings.HasPrefix(pkg, "internal/testkit/") {
			return nil // test helpers: outside the order, checked below
		}
		mine := layerOf(pkg)
		if mine < 0 {
			t.Errorf("package %s is in no layer of ARCHITECTURE.md", pkg)
			return nil
		}
		checked++
		for _, imp := range p.Imports {
			rel, ok := strings.CutPrefix(imp, module+"/")
			if imp == module {
				rel, ok = ".", true
			}
			if !ok {
				continue
			}
			if strings.HasPrefix(rel, "internal/testkit/") {
				t.Errorf("%s imports the test helper %s", pkg, rel)
				continue
			}
			switch theirs := layerOf(rel); {
			case theirs < 0:
				t.Errorf("%s imports %s, which is in no layer", pkg, rel)
			case theirs < mine:
				t.Errorf("%s (layer %q) imports %s of a layer above it (%q)", pkg, layers[mine], rel, layers[theirs])
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked < 10 {
		t.Errorf("only %d packages checked: the walk missed the tree", checked)
	}
}

// readLayers returns the layers ARCHITECTURE.md lists, from the top, in the
// first fenced block of its "Layers" section: one package path a line, or
// a folder followed by /* for every package under it; "." is the module
// root.
func readLayers(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile("ARCHITECTURE.md")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile("(?s)\n## Layers\n.*?```[a-z]*\n(.*?)```").FindSubmatch(b)
	if m == nil {
		t.Fatal("ARCHITECTURE.md has no Layers section with a fenced list")
	}
	var layers []string
	for _, line := range strings.Split(string(m[1]), "\n") {
		if f := strings.Fields(line); len(f) > 0 {
			layers = append(layers, strings.TrimSuffix(f[0], "/"))
		}
	}
	return layers
}
