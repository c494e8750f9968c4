package config

import (
	"strings"
	"testing"
	"time"
)

func TestUnknownKeys(t *testing.T) {
	const file = `# line 1
[loop]
command = "x"
[auto_retry]
global_cap = 15
globl_cap = 20
[auto_retry.max_retries_by_type]
build = 1
[lop]
max_loops = 3

[verify.build]
comand = "go build"
command = "go build"
[backoff]
jitter = 0.1
  GLOBAL_CAP = 1
extra = { a = 1 }
`
	path := writeConfig(t, file)
	_, err := Load(path, nil)
	// [lop] hides its keys: one problem, at the section.
	want := []string{
		path + `:6: unknown key "globl_cap" in [auto_retry] (did you mean "global_cap"?)`,
		path + `:9: unknown section [lop] (did you mean [loop]?)`,
		path + `:13: unknown key "comand" in [verify.build] (did you mean "command"?)`,
		path + `:17: unknown key "GLOBAL_CAP" in [backoff]`,
		path + `:18: unknown key "extra" in [backoff]`,
	}
	ps := problems(t, err)
	var got []string
	for _, p := range ps {
		got = append(got, p.String())
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if got, want := err.Error(), strings.Join(want, "\n"); got != want {
		t.Errorf("Error() = %q, want the problems one per line", got)
	}
	if got, want := ps[0].Key, "auto_retry.globl_cap"; got != want {
		t.Errorf("Key = %q, want %q", got, want)
	}
}

func TestUnknownTopLevelKey(t *testing.T) {
	path := writeConfig(t, "\nglobal_cap = 20\n")
	_, err := Load(path, nil)
	if got, want := err.Error(), path+`:2: unknown key "global_cap" outside any section (did you mean to put it under [auto_retry]?)`; got != want {
		t.Errorf("got %q\nwant %q", got, want)
	}
}

// TestLocateCaseSiblings: the TOML decoder matches names without regard to
// case when there is no exact match; the line of a key must not depend on
// map order when a sibling differs from it only in case.
func TestLocateCaseSiblings(t *testing.T) {
	path := writeConfig(t, "[auto_retry]\nglobal_cap = 1\nGlobal_Cap = 2\nGLOBAL_CAP = 3\n")
	for range 20 {
		_, err := Load(path, nil)
		ps := problems(t, err)
		if len(ps) != 2 || ps[0].Line != 3 || ps[1].Line != 4 {
			t.Fatalf("got %v, want unknown keys on lines 3 and 4", err)
		}
	}
}

func TestSyntaxErrors(t *testing.T) {
	tests := []struct {
		file      string
		line, col int
		msg       string
	}{
		{"[loop]\nmax_loops = = 3\n", 2, 13, "syntax error: expected value but found '=' instead"},
		{"[loop]\ncommand = \"x\nmax_loops = 3\n", 2, 13, "syntax error: strings cannot contain newlines"},
		{"\n\n[loop\n", 3, 6, "syntax error: expected '.' or ']' to end table name, but got '\\n' instead"},
		{"[loop]\nmax_loops = 3\nmax_loops = 4\n", 3, 1, "syntax error: key 'loop.max_loops' has already been defined"},
		{"\uFEFFa = @\n", 1, 5, "syntax error: expected value but found '@' instead"},
		{"[stall]\nloops = 99999999999999999999\n", 2, 9, "syntax error: 99999999999999999999 is out of range for int64"},
	}
	for _, tt := range tests {
		path := writeConfig(t, tt.file)
		_, err := Load(path, nil)
		ps := problems(t, err)
		if len(ps) != 1 {
			t.Fatalf("%q: got %d problems, want 1: %v", tt.file, len(ps), err)
		}
		p := ps[0]
		if p.File != path || p.Line != tt.line || p.Col != tt.col || p.Msg != tt.msg {
			t.Errorf("%q: got %s:%d:%d: %s\nwant %s:%d:%d: %s", tt.file, p.File, p.Line, p.Col, p.Msg, path, tt.line, tt.col, tt.msg)
		}
	}
}

func TestBadValues(t *testing.T) {
	tests := []struct {
		file string
		want string // line: message
	}{
		{"[auto_retry]\nglobal_cap = -1", "2: auto_retry.global_cap: must be at least 0, got -1"},
		{"[auto_retry]\nmax_retries = -3", "2: auto_retry.max_retries: must be at least 0, got -3"},
		{"[auto_retry]\nhalt_after_repeats = 0", "2: auto_retry.halt_after_repeats: must be at least 1, got 0"},
		{"[auto_retry.max_retries_by_type]\nbuild = -1", "2: auto_retry.max_retries_by_type.build: must be at least 0, got -1"},
		{"[auto_retry.max_retries_by_type]\nbuild = \"1\"", "2: auto_retry.max_retries_by_type.build: must be a whole number, not a string"},
		{"[auto_retry.max_retries_by_type]\nbuild = 1\nBuild = 2", `2: auto_retry.max_retries_by_type: "Build" and "build" are the same type (types are compared without regard to case)`},
		{"[auto_retry]\nmax_retries_by_type = 3", "2: auto_retry.max_retries_by_type: must be a table ([auto_retry.max_retries_by_type]), not a whole number"},
		{"[loop]\nmax_loops = 0", "2: loop.max_loops: must be at least 1, got 0"},
		{"[loop]\nmax_loops = 2.5", "2: loop.max_loops: must be a whole number, not a number"},
		{"[loop]\ntimeout = \"30 minutes\"", `2: loop.timeout: "30 minutes" is not a duration (use Go syntax such as "30m" or "1h30m")`},
		{"[loop]\ntimeout = 30", `2: loop.timeout: must be a duration string such as "30m", not a whole number`},
		{"[loop]\ntimeout = \"-5m\"", `2: loop.timeout: must be positive, got "-5m"`},
		{"[loop]\ncommand = [\"a\"]", "2: loop.command: must be a string, not an array"},
		{"loop = 3", "1: loop: must be a table ([loop]), not a whole number"},
		{"[backoff]\njitter = 1.5", "2: backoff.jitter: must be between 0 and 1, got 1.5"},
		{"[backoff]\njitter = -0.1", "2: backoff.jitter: must be between 0 and 1, got -0.1"},
		{"[backoff]\njitter = nan", "2: backoff.jitter: must be a finite number, got NaN"},
		{"[backoff]\nfactor = 0.5", "2: backoff.factor: must be at least 1, got 0.5"},
		{"[backoff]\nfactor = inf", "2: backoff.factor: must be a finite number, got +Inf"},
		{"[backoff]\nattempts = 0", "2: backoff.attempts: must be at least 1, got 0"},
		{"[backoff]\nbase = \"0s\"", `2: backoff.base: must be positive, got "0s"`},
		{"[signature]\nnormalize = \"v4\"", `2: signature.normalize: "v4" is not one of "v3", "v2", "v1", "off"`},
		{"[signature]\nextra_patterns = [\"ok\", \"(\"]", `2: signature.extra_patterns: item 2: invalid regexp "(": missing closing )`},
		{"[signature]\nextra_patterns = [\"\\\\d*\"]", `2: signature.extra_patterns: item 1: regexp "\\d*" matches the empty string`},
		{"[signature]\nextra_patterns = \"x\"", "2: signature.extra_patterns: must be an array of strings, not a string"},
		{"[classify]\ntransient = [\"a\", 429]", "2: classify.transient: item 2: must be a string, not a whole number"},
		{"[classify]\npermanent = [\"\"]", "2: classify.permanent: item 1: empty pattern would match any output"},
		{"[verify]\nallow_issue_commands = \"yes\"", "2: verify.allow_issue_commands: must be true or false, not a string"},
		{"[verify.build]\ntimeout = \"1m\"", `1: verify.build: command is missing; a check needs command = "...", the shell command that verifies an issue's fix`},
		{"[verify.build]\ncommand = \"  \"", "2: verify.build.command: must not be empty"},
		{"[verify.build]\ncommand = \"make\"\ntimeout = \"soon\"", `3: verify.build.timeout: "soon" is not a duration (use Go syntax such as "30m" or "1h30m")`},
		{"[logs]\ntext_retention = 168", `2: logs.text_retention: must be a duration string such as "30m", not a whole number`},
		{"[circuit_breaker]\ncooldown = 1979-05-27", `2: circuit_breaker.cooldown: must be a duration string such as "30m", not a date or time`},
		{"[stall]\nloops = true", "2: stall.loops: must be a whole number, not a boolean"},
		{"[cascade]\nwindow = 0", "2: cascade.window: must be at least 1, got 0"},
		{"[tiers]\nsame_agent = -1", "2: tiers.same_agent: must be at least 0, got -1"},
		{"[[verify.build]]\ncommand = \"x\"", `1: verify.build: a check must be a table ([verify.build] with command = "..."), not an array`},
		{"[auto_retry.max_retries_by_type]\n\"\" = 1", "2: auto_retry.max_retries_by_type: a type name must not be empty"},
		{"[verify.\" \"]\ncommand = \"x\"", "1: verify: a check name must not be empty"},
		{"[metrics]\ntextfile = {}", "2: metrics.textfile: must be a string, not a table"},
		{"[verify]\nbuild = \"go build\"", `2: verify.build: a check must be a table ([verify.build] with command = "..."), not a string`},
		{"[verify]\nalow_issue_commands = true", `2: unknown key "alow_issue_commands" in [verify] (did you mean "allow_issue_commands"?)`},
	}
	for _, tt := range tests {
		path := writeConfig(t, tt.file+"\n")
		c, err := Load(path, nil)
		if c != nil {
			t.Errorf("%q: Load returned a config with an error", tt.file)
		}
		ps := problems(t, err)
		if len(ps) != 1 {
			t.Errorf("%q: got %d problems, want 1: %v", tt.file, len(ps), err)
			continue
		}
		if got, want := ps[0].String(), path+":"+tt.want; got != want {
			t.Errorf("%q:\n got %s\nwant %s", tt.file, got, want)
		}
	}
}

// TestAllProblemsAtOnce: one Load reports every bad value, in file order.
func TestAllProblemsAtOnce(t *testing.T) {
	path := writeConfig(t, `[backoff]
jitter = 2
factor = 0
[loop]
max_loops = -1
[auto_retry]
global_cap = "many"
`)
	env := envFunc(map[string]string{"ORCHESTRATOR_STALL_LOOPS": "x"})
	_, err := Load(path, env)
	ps := problems(t, err)
	var got []string
	for _, p := range ps {
		got = append(got, strings.TrimPrefix(p.String(), path))
	}
	want := []string{
		":2: backoff.jitter: must be between 0 and 1, got 2",
		":3: backoff.factor: must be at least 1, got 0",
		":5: loop.max_loops: must be at least 1, got -1",
		":7: auto_retry.global_cap: must be a whole number, not a string",
		`ORCHESTRATOR_STALL_LOOPS: stall.loops: "x" is not a whole number`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestManyProblemsBounded: a file with a great many bad keys is reported
// quickly (lines are looked up for the first ones only) and completely.
func TestManyProblemsBounded(t *testing.T) {
	var b strings.Builder
	b.WriteString("[loop]\n")
	const n = 300
	for i := range n {
		b.WriteString("k")
		b.WriteString(strings.Repeat("x", i%7))
		b.WriteString(string(rune('a'+i%26)) + strings.Repeat("y", i/26) + " = 1\n")
	}
	path := writeConfig(t, b.String())
	start := time.Now()
	_, err := Load(path, nil)
	ps := problems(t, err)
	if len(ps) != n {
		t.Errorf("got %d problems, want %d", len(ps), n)
	}
	located := 0
	for _, p := range ps {
		if p.Line > 0 {
			located++
		}
	}
	if located != maxLocated {
		t.Errorf("%d problems have a line, want %d", located, maxLocated)
	}
	if d := time.Since(start); d > 20*time.Second {
		t.Errorf("took %v", d)
	}
}
