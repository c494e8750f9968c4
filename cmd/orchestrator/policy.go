package main

import (
	"flag"
	"os"
	"path/filepath"
	"time"

	"github.com/autoretry/orchestrator/internal/foundations/config"
	"github.com/autoretry/orchestrator/orchestrator"
	"github.com/autoretry/orchestrator/templates"
)

// config loads the configuration: --config FILE (which must exist), else
// DIR/config.toml (which may be missing), then the ORCHESTRATOR_<SECTION>_<KEY>
// environment on top. Flags are applied by the commands that have them.
func (e *env) config() (*config.Config, error) {
	if e.cfg != nil {
		return e.cfg, nil
	}
	var (
		cfg *config.Config
		err error
	)
	if e.configPath != "" {
		cfg, err = config.Load(e.configPath, e.getenv)
	} else {
		cfg, err = config.LoadOptional(filepath.Join(e.dir, "config.toml"), e.getenv)
	}
	if err != nil {
		return nil, err
	}
	if e.environ != nil {
		// A misspelt ORCHESTRATOR_<SECTION>_<KEY> would otherwise be ignored.
		if err := cfg.CheckEnviron(e.environ()); err != nil {
			return nil, err
		}
	}
	e.cfg = cfg
	return cfg, nil
}

// oneIDEngine parses the arguments of command c, which takes one issue ID
// (see oneID), and returns the ID and the orchestrator for c.
func (e *env) oneIDEngine(c *command, fs *flag.FlagSet, args []string) (string, *orchestrator.Orchestrator, error) {
	id, err := e.oneID(c, fs, args)
	if err != nil {
		return "", nil, err
	}
	o, err := e.engine(c.name)
	if err != nil {
		return "", nil, err
	}
	return id, o, nil
}

// noArgsEngine parses the flags of command c, which takes no arguments (see
// noArgs), and returns the orchestrator for c.
func (e *env) noArgsEngine(c *command, fs *flag.FlagSet, args []string) (*orchestrator.Orchestrator, error) {
	if err := e.noArgs(c, fs, args); err != nil {
		return nil, err
	}
	return e.engine(c.name)
}

// engine returns the orchestrator for the state directory, for command name.
func (e *env) engine(name string) (*orchestrator.Orchestrator, error) {
	cfg, err := e.config()
	if err != nil {
		return nil, err
	}
	now, err := e.now()
	if err != nil {
		return nil, err
	}
	fixed := e.getenv("ORCHESTRATOR_NOW") != ""
	set := &templates.Set{Dir: filepath.Join(e.dir, "templates"), Color: e.color()}
	if err := set.Check(); err != nil {
		return nil, err
	}
	inv := self
	if e.dirFlagged {
		inv += " --dir " + e.dir
	}
	o := &orchestrator.Orchestrator{
		Dir: e.dir, Config: cfg, Templates: set, Stdout: e.stdout, Stderr: e.stderr, Command: name, Invocation: inv,
		NewSignature: e.newSignature,
	}
	if fixed {
		o.Now = func() time.Time { return now }
	}
	return o, nil
}

// color reports whether output may use colour: not with NO_COLOR set, and
// only when stdout is a terminal.
func (e *env) color() bool {
	f, ok := e.stdout.(*os.File)
	if !ok {
		return false
	}
	return templates.ColorFor(f, e.getenv)
}
