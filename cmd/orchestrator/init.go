package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	example "github.com/autoretry/orchestrator"
	"github.com/autoretry/orchestrator/internal/foundations/statefile"
	"github.com/autoretry/orchestrator/issuequeue"
)

func init() {
	register(&command{
		name:      "init",
		forPeople: true,
		summary:   "create .orchestrator/ from the commented example",
		usage: `Usage: orchestrator init [--example] [--agent KIND] [--dir DIR]

Creates the state directory (default .orchestrator): config.toml with every
setting explained, an empty issue_queue.md, session_state.md, prompt.md (the
instructions a coding agent is given), and a .gitignore for what should not
be committed (the lock, logs, the report). Refuses (exit 2) if the directory
exists, so it never overwrites anything.

Then edit config.toml: set [loop] command to the script that runs one loop,
or give --agent to have it set to a coding agent's command line.
'orchestrator run' checks that it exists before the first loop.

Flags:
    --example       also file the demo's two example issues in issue_queue.md
    --agent KIND    set [loop] command to run that agent on prompt.md, non-
                    interactively with its structured output on, and
                    [agent] kind to KIND: claude, codex, gemini, aider or
                    opencode (docs/agents.md has each command and what it
                    lets the agent do unasked)

Examples:
    orchestrator init
    orchestrator init --agent claude
    orchestrator init --dir ci/.orchestrator
    orchestrator init --example && orchestrator status
`,
		run: runInit,
	})
}

func runInit(ctx context.Context, e *env, args []string) error {
	c := commands["init"]
	fs := flag.NewFlagSet("init", flag.ContinueOnError)
	example := fs.Bool("example", false, "")
	agent := fs.String("agent", "", "")
	if _, err := e.parseFlags(c, fs, args); err != nil {
		return err
	}
	var ac agentCommand
	if *agent != "" {
		var ok bool
		if ac, ok = agentCommandFor(*agent); !ok {
			return usageErr(c, "--agent %q: want claude, codex, gemini, aider or opencode", *agent)
		}
	}
	if _, err := os.Lstat(e.dir); err == nil {
		return withCode(exitUsage, fmt.Errorf("%s already exists; nothing was changed", e.dir),
			"run '"+self+" lint' to check it, or choose another directory with --dir")
	}
	if err := copyExample(e.dir); err != nil {
		return err
	}
	if !*example {
		if err := writeBytes(filepath.Join(e.dir, issuequeue.QueueFile), []byte(newProjectQueue)); err != nil {
			return err
		}
	}
	if err := writeBytes(filepath.Join(e.dir, ".gitignore"), []byte(stateGitignore)); err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "created %s\n", e.dir)
	if ac.kind != "" {
		path := filepath.Join(e.dir, "config.toml")
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if err := writeBytes(path, ac.configure(b)); err != nil {
			return err
		}
		fmt.Fprintf(e.stdout, "[loop] command runs %s on %s\n", ac.kind, filepath.Join(e.dir, "prompt.md"))
		fmt.Fprintf(e.stdout, "next: read %s and edit it for your project, then run '"+self+" run --dry-run'\n", filepath.Join(e.dir, "prompt.md"))
		return nil
	}
	fmt.Fprintf(e.stdout, "next: set [loop] command in %s, then run '"+self+" status'\n", filepath.Join(e.dir, "config.toml"))
	return nil
}

// newProjectQueue is the issue_queue.md of a new project.
const newProjectQueue = `# Issue Queue

Issues are filed here by the loop's QA step ('orchestrator add'), by
'orchestrator fail', or by hand: a heading "## ISSUE-YYYYMMDD-NNN" followed by
a two-column field table. 'orchestrator lint' checks what you write.
`

// stateGitignore keeps out of git what the tool rewrites on every run; the
// queue, the session state and the configuration are worth committing.
const stateGitignore = `# Written by orchestrator on every run: not worth committing.
.lock
.lock.write
logs/
analytics.html
*.rejected
.*.tmp-*
`

// copyExample writes the embedded example state directory to dir, which must
// not exist.
func copyExample(dir string) error {
	if err := os.MkdirAll(filepath.Dir(filepath.Clean(dir)), 0o755); err != nil {
		return err
	}
	if err := os.Mkdir(dir, 0o755); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return withCode(exitUsage, fmt.Errorf("%s already exists; nothing was changed", dir))
		}
		return err
	}
	root, err := fs.Sub(example.FS, example.Root)
	if err != nil {
		return err
	}
	return fs.WalkDir(root, ".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || path == "." {
			return err
		}
		target := filepath.Join(dir, filepath.FromSlash(path))
		if d.IsDir() {
			return os.Mkdir(target, 0o755)
		}
		b, err := fs.ReadFile(root, path)
		if err != nil {
			return err
		}
		mode := os.FileMode(0o644)
		if filepath.Ext(path) == ".sh" {
			mode = 0o755
		}
		return createFile(target, b, mode)
	})
}

// createFile writes a new file. O_EXCL makes the open fail on anything
// already at path, a symbolic link included, so nothing placed in the new
// directory meanwhile is written through.
func createFile(path string, b []byte, mode os.FileMode) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
	if err != nil {
		return err
	}
	_, err = f.Write(b)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// writeBytes replaces the file at path with b, refusing links.
func writeBytes(path string, b []byte) error {
	return statefile.WriteAtomic(path, func(w io.Writer) error {
		_, err := w.Write(b)
		return err
	})
}

// agentCommand is the [loop] command init writes for a coding agent: the
// agent run once, non-interactively, on the prompt file, with its
// structured output on so that its cost, tokens, errors and limits can be
// read. docs/agents.md shows the same command lines (a test holds them
// equal).
type agentCommand struct {
	kind    string
	command string
	// risk is the comment above the command: what the agent may do without
	// asking, and what that risks.
	risk string
}

// agentCommands are the command lines of the agents init knows, each
// checked against the agent's own documentation of its flags.
var agentCommands = []agentCommand{
	{kind: "claude", command: `claude -p --output-format stream-json --verbose --permission-mode acceptEdits < "$ORCHESTRATOR_DIR/prompt.md"`,
		risk: `# Claude Code, print mode (-p: one prompt, read from standard input, then
# exit), stream-json output (it needs --verbose). acceptEdits lets it edit
# files in the workspace without asking; tools not allowed in its settings
# (shell commands among them) are refused, as no one is there to approve
# them. To let it run commands, list them in .claude/settings.json
# (permissions.allow) rather than bypassPermissions, which lets it run
# anything.`},
	{kind: "codex", command: `codex exec --json --full-auto - < "$ORCHESTRATOR_DIR/prompt.md"`,
		risk: `# Codex CLI, exec mode ("-": the prompt from standard input), events as
# JSON lines. --full-auto runs commands without asking inside its sandbox
# (the workspace writable, no network); commands outside it fail rather
# than wait for approval.`},
	{kind: "gemini", command: `gemini --output-format stream-json --yolo -p "Carry out the instructions above." < "$ORCHESTRATOR_DIR/prompt.md"`,
		risk: `# Gemini CLI, headless (-p, appended to the prompt read from standard
# input), events as JSON lines. --yolo accepts every action, shell
# commands included, without asking: run it in a container or a sandbox
# (--sandbox) on a checkout you can throw away.`},
	{kind: "aider", command: `aider --yes-always --message-file "$ORCHESTRATOR_DIR/prompt.md"`,
		risk: `# Aider, one message from the prompt file, then exit. --yes-always answers
# yes to every question (adding files, running the commands it suggests);
# it commits its edits to git unless --no-auto-commits is given.`},
	{kind: "opencode", command: `opencode run --format json < "$ORCHESTRATOR_DIR/prompt.md"`,
		risk: `# opencode, run mode (the prompt read from standard input), events as JSON
# lines. What it may do unasked is its "permission" setting in
# opencode.json: a tool set to "ask" cannot be answered here and is
# refused.`},
}

func agentCommandFor(kind string) (agentCommand, bool) {
	for _, ac := range agentCommands {
		if ac.kind == kind {
			return ac, true
		}
	}
	return agentCommand{}, false
}

// configure writes the agent's command and kind into the example
// config.toml b: its [loop] command line and its [agent] kind line.
func (ac agentCommand) configure(b []byte) []byte {
	lines := strings.SplitAfter(string(b), "\n")
	section := ""
	for i, l := range lines {
		t := strings.TrimSpace(l)
		if strings.HasPrefix(t, "[") {
			section = t
			continue
		}
		switch {
		case section == "[loop]" && strings.HasPrefix(t, "command ="):
			lines[i] = ac.risk + "\ncommand = '" + ac.command + "'\n"
		case section == "[agent]" && strings.HasPrefix(t, "kind ="):
			lines[i] = `kind = "` + ac.kind + "\"\n"
		}
	}
	return []byte(strings.Join(lines, ""))
}
