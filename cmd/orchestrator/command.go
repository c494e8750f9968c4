package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/autoretry/orchestrator/internal/foundations/config"
	"github.com/autoretry/orchestrator/internal/foundations/suggest"
	"github.com/autoretry/orchestrator/signature"
)

// A command is one subcommand. Each lives in its own file and registers
// itself from an init function, so that the list of commands is the list of
// files in this directory.
type command struct {
	name    string
	summary string // one line, shown by "orchestrator help"
	usage   string // the whole help text, shown by "help NAME" and "NAME -h"
	run     func(ctx context.Context, e *env, args []string) error
	// longRunning commands (run, watch, demo) live for hours; the others
	// read the state, maybe write it, and exit.
	longRunning bool
	// streams commands (signature, fail) read a command's output, of any
	// size, as it comes: what they allocate does not stay live, so they
	// keep the collector too.
	streams bool
	// forPeople commands (human responses, pause, archive, …) are refused
	// inside a loop of "orchestrator run": the agent must not answer its own
	// escalations or lift a person's stop.
	forPeople bool
}

var commands = map[string]*command{}

func register(c *command) {
	if _, dup := commands[c.name]; dup {
		panic("command registered twice: " + c.name) // programming error, caught by any test
	}
	commands[c.name] = c
}

// env is what a command may touch of the outside world. Commands never use
// os.Stdout, os.Getenv and friends directly, so tests can run them in-process.
type env struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	getenv         func(string) string
	environ        func() []string // the whole environment, for typo checks; nil skips them

	dir        string // state directory (--dir, ORCHESTRATOR_DIR, .orchestrator)
	dirFlagged bool   // the directory was chosen, so suggested commands must name it
	defaultDir string // set when dir is the default
	configPath string // --config; empty means <dir>/config.toml
	cfg        *config.Config
	sigRules   *signature.Rules   // compiled from cfg when first needed
	sigOlder   []*signature.Rules // the older rule sets beside the current, likewise
	sigRoot    string             // signature --root, absolute

	// beforeCommand, if set, is called once with the command about to
	// run, when its flags have named the state directory (main tunes the
	// garbage collector for it); pending is that command until then.
	beforeCommand func(c *command)
	pending       *command
}

// input opens the file named by a FILE|- argument: standard input for "-".
// A file that cannot be opened is a usage error (exit 2) with hint.
func (e *env) input(name, hint string) (io.ReadCloser, error) {
	if name == "-" {
		return io.NopCloser(e.stdin), nil
	}
	f, err := os.Open(name)
	if err != nil {
		return nil, withCode(exitUsage, err, hint)
	}
	return f, nil
}

// inputArg opens a command's optional FILE argument, standard input when it
// is absent or "-", and returns the name it was given by.
func (e *env) inputArg(args []string) (string, io.ReadCloser, error) {
	name := "-"
	if len(args) == 1 {
		name = args[0]
	}
	in, err := e.input(name, "give an existing file, or - to read standard input")
	return name, in, err
}

// exitError carries an exit code and optional hints up to Main.
type exitError struct {
	code  int
	err   error
	hints []string
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

// usageErr reports bad usage of a command: exit 2 with a pointer to its help.
func usageErr(c *command, format string, args ...any) error {
	return &exitError{code: exitUsage, err: fmt.Errorf(format, args...),
		hints: []string{"run '" + self + " help " + c.name + "' for usage"}}
}

// withCode wraps err so that Main exits with code.
func withCode(code int, err error, hints ...string) error {
	if err == nil {
		return nil
	}
	return &exitError{code: code, err: err, hints: hints}
}

// silentExit ends a command with a code and no message: the command has
// already said everything (lint findings, check's "nothing to do").
type silentExit int

func (s silentExit) Error() string { return fmt.Sprintf("exit status %d", int(s)) }

// Main runs the orchestrator command line and returns the process exit code.
func Main(args []string, stdin io.Reader, stdout, stderr io.Writer, getenv func(string) string) int {
	return newEnv(stdin, stdout, stderr, getenv).main(args)
}

// self is the command as a person invoked it, for the commands hints
// suggest: the name it was run under (argv[0]'s base name), which need not
// be "orchestrator".
var self = commandName(os.Args)

// commandName is the name a command line was run under; "orchestrator" if
// it has none.
func commandName(args []string) string {
	if len(args) == 0 || args[0] == "" {
		return "orchestrator"
	}
	return strings.TrimSuffix(filepath.Base(args[0]), ".exe")
}

// newEnv returns the env of a command line run with these streams and
// environment.
func newEnv(stdin io.Reader, stdout, stderr io.Writer, getenv func(string) string) *env {
	return &env{stdin: stdin, stdout: stdout, stderr: stderr, getenv: getenv, environ: os.Environ}
}

// main runs the command line args and returns the process exit code.
func (e *env) main(args []string) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	err := dispatch(ctx, e, args)
	return report(e, err)
}

func dispatch(ctx context.Context, e *env, args []string) error {
	if len(args) == 1 && (args[0] == "--version" || args[0] == "-v" || args[0] == "-version") {
		args = []string{"version"}
	}
	fs := flag.NewFlagSet("orchestrator", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	e.globalFlags(fs)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprint(e.stdout, topUsage())
			return nil
		}
		return &exitError{code: exitUsage, err: err, hints: []string{"run '" + self + " help' for usage"}}
	}
	rest := fs.Args()
	if len(rest) == 0 {
		fmt.Fprint(e.stderr, topUsage())
		return silentExit(exitUsage)
	}
	c, ok := commands[rest[0]]
	if !ok {
		err := fmt.Errorf("unknown command %q", rest[0])
		hint := "run '" + self + " help' for the list of commands"
		if near := suggest.Nearest(rest[0], commandNames()); near != "" {
			hint = "did you mean '" + self + " " + near + "'?"
		}
		return &exitError{code: exitUsage, err: err, hints: []string{hint}}
	}
	e.resolveDir()
	if c.name != "init" && c.name != "demo" {
		e.findDirUpward()
	}
	if c.forPeople {
		if why := e.inLoop(); why != "" {
			return &exitError{code: exitUsage,
				err:   fmt.Errorf("'orchestrator %s' is for people, not for the loop of a run (%s); nothing was changed", c.name, why),
				hints: []string{"the loop records what it found with '" + self + " add', 'fail' or 'resolve'; a person answers escalations between runs"}}
		}
	}
	e.pending = c // for parseFlags, which knows the directory the flags name
	err := c.run(ctx, e, rest[1:])
	if notifies[c.name] {
		e.notify(ctx, c.name)
	}
	return err
}

// notifies lists the commands that can record an event that needs a
// person, after which [notify] command runs for what is new.
var notifies = map[string]bool{"run": true, "check": true, "fail": true, "resolve": true, "add": true, "begin": true}

// notify runs [notify] command for the new events that need a person. A
// notification that fails is a warning: it never changes the exit status.
func (e *env) notify(ctx context.Context, name string) {
	cfg, err := e.config()
	if err != nil || cfg.Notify.Command == "" {
		return
	}
	o, err := e.engine(name)
	if err == nil {
		err = o.Notify(context.WithoutCancel(ctx), cfg.Notify.Command)
	}
	if err != nil {
		fmt.Fprintf(e.stderr, "orchestrator: warning: notifying: %v\n", err)
	}
}

// globalFlags defines the flags every command accepts, before or after its name.
func (e *env) globalFlags(fs *flag.FlagSet) {
	fs.StringVar(&e.dir, "dir", e.dir, "state directory (default $ORCHESTRATOR_DIR or .orchestrator)")
	fs.StringVar(&e.configPath, "config", e.configPath, "config file (default DIR/config.toml)")
}

func (e *env) resolveDir() {
	if e.dir != "" && e.dir != e.defaultDir {
		e.dirFlagged = true
		return
	}
	if d := e.getenv("ORCHESTRATOR_DIR"); d != "" {
		e.dir, e.dirFlagged = d, true
		return
	}
	e.dir, e.defaultDir = ".orchestrator", ".orchestrator"
}

// findDirUpward makes the default state directory the nearest .orchestrator
// in the working directory or one of its parents, as git finds .git, so
// that commands work from a subdirectory of the project.
func (e *env) findDirUpward() {
	if e.dirFlagged {
		return
	}
	wd, err := os.Getwd()
	if err != nil {
		return
	}
	for d := wd; ; d = filepath.Dir(d) {
		if fi, err := os.Stat(filepath.Join(d, ".orchestrator")); err == nil && fi.IsDir() {
			if d != wd {
				e.dir, e.dirFlagged = filepath.Join(d, ".orchestrator"), true
			}
			return
		}
		if filepath.Dir(d) == d {
			return
		}
	}
}

// parseFlags parses a command's flags, allowing flags after positional
// arguments ("fail ID --output out.txt"), as people type them. "-h" prints
// the command's help and ends it with exit 0.
func (e *env) parseFlags(c *command, fs *flag.FlagSet, args []string) ([]string, error) {
	fs.SetOutput(io.Discard)
	e.globalFlags(fs)
	var positional []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				fmt.Fprint(e.stdout, c.usage)
				return nil, silentExit(exitOK)
			}
			return nil, flagErr(c, fs, err)
		}
		args = fs.Args()
		if len(args) == 0 {
			break
		}
		if args[0] == "--" {
			positional = append(positional, args[1:]...)
			break
		}
		positional = append(positional, args[0])
		args = args[1:]
	}
	e.resolveDir()
	if c := e.pending; c != nil && e.beforeCommand != nil {
		e.pending = nil
		e.beforeCommand(c)
	}
	return positional, nil
}

// flagErr restates an error of the flag package in the words of the other
// usage errors: what is wrong with which flag, a did-you-mean for a
// misspelt one, and the command's usage line, so that the fix is on screen.
func flagErr(c *command, fs *flag.FlagSet, err error) error {
	msg := err.Error()
	var hints []string
	if name, ok := strings.CutPrefix(msg, "flag provided but not defined: "); ok {
		msg = "unknown flag " + name
		var names []string
		fs.VisitAll(func(f *flag.Flag) { names = append(names, f.Name) })
		if near := suggest.Nearest(strings.TrimLeft(name, "-"), names); near != "" {
			hints = append(hints, "did you mean --"+near+"?")
		}
	} else if name, ok := strings.CutPrefix(msg, "flag needs an argument: "); ok {
		msg = "--" + strings.TrimLeft(name, "-") + " needs a value"
	} else if f := invalidFlag(fs, msg); f != nil {
		val := valueInError(msg)
		msg = fmt.Sprintf("%q is not a valid value for --%s", val, f.Name)
		if g, ok := f.Value.(flag.Getter); ok {
			switch g.Get().(type) {
			case time.Duration:
				msg = fmt.Sprintf("--%s takes a duration with a unit, e.g. 8h or 30m; got %q", f.Name, val)
			case int, int64, uint, uint64:
				msg = fmt.Sprintf("--%s takes a whole number; got %q", f.Name, val)
			case bool:
				msg = fmt.Sprintf("--%s takes no value, or =true or =false; got %q", f.Name, val)
			}
		}
	}
	if line := usageLine(c); line != "" {
		hints = append(hints, "usage: "+line)
	}
	hints = append(hints, "run '"+self+" help "+c.name+"' for usage")
	return &exitError{code: exitUsage, err: fmt.Errorf("%s: %s", c.name, msg), hints: hints}
}

// invalidFlag returns the flag named in the flag package's "invalid value"
// message, or nil when msg is another error.
func invalidFlag(fs *flag.FlagSet, msg string) *flag.Flag {
	if !strings.HasPrefix(msg, "invalid value ") && !strings.HasPrefix(msg, "invalid boolean value ") {
		return nil
	}
	_, rest, ok := strings.Cut(msg, " for flag -")
	if !ok {
		_, rest, ok = strings.Cut(msg, " for -")
	}
	if !ok {
		return nil
	}
	name, _, _ := strings.Cut(rest, ":")
	return fs.Lookup(name)
}

// valueInError returns the quoted value of an "invalid value" message.
func valueInError(msg string) string {
	i := strings.IndexByte(msg, '"')
	if i < 0 {
		return ""
	}
	q, err := strconv.QuotedPrefix(msg[i:])
	if err != nil {
		return ""
	}
	v, err := strconv.Unquote(q)
	if err != nil {
		return ""
	}
	return v
}

// usageLine is the first line of a command's help, without "Usage: ".
func usageLine(c *command) string {
	line, _, _ := strings.Cut(c.usage, "\n")
	line, ok := strings.CutPrefix(strings.TrimSpace(line), "Usage: ")
	if !ok {
		return ""
	}
	return line
}

// noArgs parses the flags of a command that takes no arguments; fs is nil
// for one without flags of its own.
func (e *env) noArgs(c *command, fs *flag.FlagSet, args []string) error {
	if fs == nil {
		fs = flag.NewFlagSet(c.name, flag.ContinueOnError)
	}
	args, err := e.parseFlags(c, fs, args)
	if err != nil {
		return err
	}
	if len(args) > 0 {
		return usageErr(c, "%s takes no arguments", c.name)
	}
	return nil
}

// oneID parses the flags of a command that takes one issue ID, and returns
// the ID; fs is nil for one without flags of its own.
func (e *env) oneID(c *command, fs *flag.FlagSet, args []string) (string, error) {
	if fs == nil {
		fs = flag.NewFlagSet(c.name, flag.ContinueOnError)
	}
	args, err := e.parseFlags(c, fs, args)
	if err != nil {
		return "", err
	}
	if len(args) != 1 {
		return "", usageErr(c, "%s takes one issue ID", c.name)
	}
	return args[0], nil
}

func commandNames() []string {
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}
