package templates

import (
	"os"
	"path/filepath"
	"testing"
)

func env(vars map[string]string) func(string) string {
	return func(k string) string { return vars[k] }
}

// TestColorFor: colour only on a terminal, and never with NO_COLOR or
// TERM=dumb.
func TestColorFor(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	devNull, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer devNull.Close()
	file, err := os.Create(filepath.Join(t.TempDir(), "out"))
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()
	closed, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	closed.Close()

	none := env(nil)
	for name, f := range map[string]*os.File{"pipe": w, "/dev/null": devNull, "file": file, "closed": closed, "nil": nil} {
		if ColorFor(f, none) {
			t.Errorf("ColorFor(%s) = true, want false: not a terminal", name)
		}
	}

	tty := openTerminal(t)
	tests := []struct {
		env  map[string]string
		want bool
	}{
		{nil, true},
		{map[string]string{"TERM": "xterm-256color"}, true},
		{map[string]string{"NO_COLOR": "1"}, false},
		{map[string]string{"NO_COLOR": "", "TERM": "xterm"}, true},
		{map[string]string{"TERM": "dumb"}, false},
	}
	for _, tt := range tests {
		if got := ColorFor(tty, env(tt.env)); got != tt.want {
			t.Errorf("ColorFor(terminal, %v) = %v, want %v", tt.env, got, tt.want)
		}
	}
}
