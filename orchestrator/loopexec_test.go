package orchestrator

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The loop command's program is checked before the first loop as sh
// would find it: a path from the workspace, a plain name along PATH (an
// empty or relative entry from the workspace). Builtins and commands that
// use the shell's syntax in the first word are left to the shell.
func TestCheckLoopCommand(t *testing.T) {
	ws := t.TempDir()
	bin := t.TempDir()
	mk := func(path string, mode os.FileMode) {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte("#!/bin/sh\n"), mode); err != nil {
			t.Fatal(err)
		}
	}
	mk(filepath.Join(ws, "scripts", "agent.sh"), 0o755)
	mk(filepath.Join(ws, "scripts", "plain.txt"), 0o644)
	mk(filepath.Join(ws, "local", "wsagent"), 0o755)
	mk(filepath.Join(ws, "dotagent"), 0o755)
	mk(filepath.Join(bin, "claude"), 0o755)
	mk(filepath.Join(bin, "notexec"), 0o644)
	if err := os.MkdirAll(filepath.Join(bin, "adir"), 0o755); err != nil {
		t.Fatal(err)
	}
	getenv := func(path string) func(string) string {
		return func(k string) string {
			if k == "PATH" {
				return path
			}
			return ""
		}
	}
	tests := []struct {
		command string
		path    string
		why     string // "" when the command is fine
	}{
		{"", bin, ""},
		{"   ", bin, ""},
		{"claude -p prompt.md", bin, ""},
		{"claude", "/nonexistent" + string(filepath.ListSeparator) + bin, ""},
		{"codex exec", bin, "not found in PATH"},
		{"notexec", bin, "not found in PATH"},
		{"adir", bin, "not found in PATH"},
		{"wsagent", "local", ""},
		{"dotagent", string(filepath.ListSeparator) + bin, ""},
		{"dotagent", bin + string(filepath.ListSeparator), ""},
		{"dotagent", bin, "not found in PATH"},
		{"./scripts/agent.sh --fast", "", ""},
		{"scripts/agent.sh", "", ""},
		{filepath.Join(ws, "scripts", "agent.sh"), "", ""},
		{"./scripts/missing.sh", "", "not found (looked in " + ws + ")"},
		{"./scripts", "", "is a directory"},
		{"./scripts/plain.txt", "", "is not executable (chmod +x ./scripts/plain.txt)"},
		{"echo hello", "", ""},
		{"exit 0", "", ""},
		{"$AGENT run", "", ""},
		{"FOO=1 agent", "", ""},
		{"(cd sub && agent)", "", ""},
		{"~/bin/agent", "", ""},
	}
	for _, tt := range tests {
		err := CheckLoopCommand(tt.command, ws, getenv(tt.path))
		if tt.why == "" {
			if err != nil {
				t.Errorf("%q with PATH=%q: %v, want fine", tt.command, tt.path, err)
			}
			continue
		}
		var le *LoopCommandError
		if !errors.As(err, &le) || le.Why != tt.why || le.Program != strings.Fields(tt.command)[0] {
			t.Errorf("%q with PATH=%q: %v, want %q", tt.command, tt.path, err, tt.why)
			continue
		}
		if want := le.Program + ": " + tt.why; err.Error() != want {
			t.Errorf("error %q, want %q", err, want)
		}
	}
}

// A verification command that cannot run is a setting's error that says
// why by its exit status and that the issue was not counted as failing.
func TestVerifyCommandError(t *testing.T) {
	for _, tt := range []struct {
		code int
		want string
	}{
		{127, "the verification command of [verify.unit] was not found (exit status 127): go tset ./...; ISSUE-20261122-001 was not counted as failing and is pending again"},
		{126, "the verification command of [verify.unit] could not be executed (exit status 126): go tset ./...; ISSUE-20261122-001 was not counted as failing and is pending again"},
	} {
		e := &VerifyCommandError{Check: "unit", Command: "go tset ./...", Issue: "ISSUE-20261122-001", ExitCode: tt.code}
		if e.Error() != tt.want {
			t.Errorf("%d: %q\nwant %q", tt.code, e.Error(), tt.want)
		}
	}
}
