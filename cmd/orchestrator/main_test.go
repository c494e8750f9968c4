package main

import (
	"flag"
	"os"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
)

var update = flag.Bool("u", false, "update testscript golden files (cmp) in testdata/script")

func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"orchestrator": func() {
			os.Exit(Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr, os.Getenv))
		},
		// The same command under another name: its hints must name it so.
		"autoretry": func() {
			os.Exit(Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr, os.Getenv))
		},
	})
}

// TestScript runs the CLI as users do: one script per behaviour in
// testdata/script, each stating the promise it proves.
func TestScript(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir:           "testdata/script",
		UpdateScripts: *update,
		Setup: func(env *testscript.Env) error {
			// A fixed clock and no colour: scripts compare output byte for byte.
			env.Setenv("ORCHESTRATOR_NOW", "2026-11-22T10:15:00Z")
			env.Setenv("NO_COLOR", "1")
			return nil
		},
	})
}
