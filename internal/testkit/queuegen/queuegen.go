// Package queuegen generates realistic, deterministic state directories —
// issue_queue.md and session_state.md — of any size, for the benchmarks of
// the commands that load them.
//
// A generated queue looks like one a long-lived loop has built up: every
// field of an issue with varied values, most issues resolved, some skipped or
// escalated (a few of them halted after the same failure three times), a
// backlog of pending issues that are not auto-retried, and a few pending
// auto-retry issues that the end-of-loop check retries or escalates. Failure
// Details hold a few lines of real-looking output (Go test failures, panics
// with stack traces, TypeScript, Python and jest errors), and Attempt
// History has 0 to 5 rows whose signatures match the Failure-Signature and
// Previous-Signatures fields. Issues average about 750 bytes, so 10,000
// issues make about 7 MiB.
package queuegen

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/autoretry/orchestrator/issuequeue"
)

// Options says what to generate. The same Options always give the same bytes.
type Options struct {
	Issues int
	Seed   uint64
}

// Every RetryEvery-th issue (the 11th, the 1,011th, …) is a pending
// Auto-Retry issue with retries left, which the end-of-loop check retries;
// every ExhaustEvery-th (the 21st, the 5,021st, …) is one that has used all
// its retries, which the check escalates. No other issue is a candidate, so
// the work of a check grows with the queue but its decisions stay few.
const (
	RetryEvery   = 1000
	ExhaustEvery = 5000
)

// Result is a generated state directory.
type Result struct {
	Queue []byte // issue_queue.md
	// State is a session_state.md that matches Queue: a run is open and has
	// used no auto-retry loop yet, and the circuit breaker is closed, so a
	// check on the pair retries Retried.
	State []byte
	// Retried lists the issues the end-of-loop check retries, in file order.
	Retried []string
	// Exhausted lists the pending Auto-Retry issues whose Retry-Count has
	// reached Max-Retries: the check escalates them.
	Exhausted []string
}

// Write puts Queue and State in dir as issue_queue.md and
// session_state.md, making dir if it is missing.
func (r Result) Write(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, issuequeue.QueueFile), r.Queue, 0o644); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, issuequeue.StateFile), r.State, 0o644)
}

// Generate returns a state directory with o.Issues issues.
func Generate(o Options) Result {
	g := &gen{rng: rand.New(rand.NewPCG(o.Seed, 0x9e3779b97f4a7c15)), n: o.Issues}
	g.b.Grow(o.Issues*760 + 1024)
	g.b.WriteString(preamble)
	day := time.Date(2025, 1, 6, 0, 0, 0, 0, time.UTC)
	perDay, k := g.rng.IntN(31)+5, 0
	for i := range o.Issues {
		if k == perDay {
			day = day.AddDate(0, 0, 1)
			if g.chance(15) {
				day = day.AddDate(0, 0, 1) // a quiet day
			}
			perDay, k = g.rng.IntN(31)+5, 0
		}
		created := day.Add(6*time.Hour + time.Duration(k)*16*time.Hour/time.Duration(perDay) +
			time.Duration(g.rng.IntN(20))*time.Minute + time.Duration(g.rng.IntN(60))*time.Second)
		k++
		g.issue(i, fmt.Sprintf("ISSUE-%s-%03d", day.Format("20060102"), k), created)
	}
	return Result{Queue: g.b.Bytes(), State: state(day), Retried: g.retried, Exhausted: g.exhausted}
}

const preamble = `# Issue Queue

Issues found by QA, one ` + "`## ISSUE-…`" + ` heading each. People, agents and
` + "`orchestrator`" + ` all edit this file; ` + "`orchestrator`" + ` changes only the cells and
sections it must and keeps everything else byte for byte.
Run ` + "`orchestrator lint`" + ` after editing it by hand.

`

func state(lastDay time.Time) []byte {
	start := lastDay.Add(23*time.Hour + 15*time.Minute)
	st := issuequeue.ParseState("session_state.md", []byte(issuequeue.StateTemplate))
	b, err := st.Apply(
		issuequeue.SetField(issuequeue.SectionRun, issuequeue.StateRunID, start.Format("20060102T150405Z")+"-4242"),
		issuequeue.SetField(issuequeue.SectionRun, issuequeue.StateStartedAt, start.Format(time.RFC3339)),
		issuequeue.SetField(issuequeue.SectionRun, issuequeue.StateLoops, "1"),
		issuequeue.SetField(issuequeue.SectionRun, issuequeue.StateOutcome, "running"),
	)
	if err != nil {
		panic("queuegen: the state template does not take a run: " + err.Error()) // a programming error, caught by the tests
	}
	return b
}

type gen struct {
	rng       *rand.Rand
	n         int
	b         bytes.Buffer
	retried   []string
	exhausted []string
}

func (g *gen) pick(s []string) string { return s[g.rng.IntN(len(s))] }

// chance reports true with probability p percent.
func (g *gen) chance(p int) bool { return g.rng.IntN(100) < p }

func (g *gen) sig() string {
	return fmt.Sprintf("%016x%016x%016x%016x", g.rng.Uint64(), g.rng.Uint64(), g.rng.Uint64(), g.rng.Uint64())
}

// issue is one generated issue before it is written.
type issue struct {
	id                    string
	created               time.Time
	kind                  *kind
	v                     vars
	typ, prio, status     string
	source, category      string
	autoRetry, halted     bool
	blocking              bool
	retries, maxRetries   int
	maxBlank              bool
	sigs                  []string // distinct signatures, oldest first; the last is Failure-Signature
	repeat                int
	attempts              int
	verify                string
	verifyRow             bool
	details, fix, history bool
	verification          bool
}

func (g *gen) issue(i int, id string, created time.Time) {
	is := &issue{id: id, created: created, kind: &kinds[g.rng.IntN(len(kinds))]}
	is.v = g.vars()
	is.typ = is.kind.typ
	is.prio = g.pick([]string{"critical", "high", "high", "medium", "medium", "medium", "low", "low"})
	is.source = g.pick([]string{"generated", "generated", "generated", "qa", "ci", "user"})
	is.category = g.pick([]string{"backend", "backend", "frontend", "api", "infra", "db", "auth", "docs"})
	is.blocking = is.prio == "critical" || g.chance(15)
	is.verifyRow, is.verify = true, ""
	switch r := g.rng.IntN(100); {
	case r < 45:
		is.verify = "build"
	case r < 80:
	default:
		is.verifyRow = false
	}
	is.maxRetries = g.pick3(3, 5, 10)
	is.maxBlank = g.chance(10)
	is.details, is.fix = is.source != "user" || g.chance(50), g.chance(45)
	is.verification = g.chance(75)

	switch {
	case i%RetryEvery == 10:
		is.status, is.autoRetry = "pending", true
		is.maxBlank = false
		is.retries = g.rng.IntN(min(is.maxRetries, 5))
		is.attempts = is.retries
		g.retried = append(g.retried, id)
	case i%ExhaustEvery == 20:
		is.status, is.autoRetry = "pending", true
		is.maxBlank, is.maxRetries = false, 3
		is.retries, is.attempts = 3, 3
		g.exhausted = append(g.exhausted, id)
	default:
		g.settled(is, i >= g.n-g.n/20)
	}
	if is.attempts > 0 {
		is.repeat = 1 + g.rng.IntN(min(is.attempts, 2))
		if is.halted {
			is.repeat = 3
		}
		distinct := min(is.attempts-is.repeat+1, 4)
		for range distinct {
			is.sigs = append(is.sigs, g.sig())
		}
	}
	is.history = is.attempts > 0 || g.chance(3)
	g.write(is)
}

func (g *gen) pick3(a, b, c int) int {
	switch r := g.rng.IntN(10); {
	case r < 5:
		return a
	case r < 8:
		return b
	default:
		return c
	}
}

// settled fills in an issue that the end-of-loop check leaves alone: done,
// given up on, waiting for a person, or pending without auto-retry. recent
// issues (the newest 5%) are more often still open.
func (g *gen) settled(is *issue, recent bool) {
	r := g.rng.IntN(100)
	if recent {
		r = r*55/100 + 45 // shift away from resolved
	}
	switch {
	case r < 80:
		is.status = "resolved"
	case r < 86:
		is.status = "skipped"
	case r < 93:
		is.status = "escalated"
	case r < 95:
		is.status = "in_progress"
	default:
		is.status = "pending"
	}
	is.autoRetry = is.status != "pending" && g.chance(25)
	switch {
	case is.status == "escalated" && is.autoRetry && g.chance(50):
		is.halted = true
		is.retries = 2 + g.rng.IntN(2)
		is.attempts = 3
	case is.status == "escalated" && is.autoRetry:
		is.retries = is.maxRetries
		is.attempts = min(is.retries, 5)
	case is.autoRetry:
		is.retries = min(g.rng.IntN(5), is.maxRetries)
		is.attempts = is.retries
		if is.status == "resolved" && is.retries > 0 && g.chance(30) {
			is.attempts-- // the last retry fixed it
		}
	default:
		if g.chance(12) {
			is.attempts = g.rng.IntN(3) // failures recorded by hand with "orchestrator fail"
		}
	}
	if is.halted {
		is.maxBlank = false
	}
}

func (g *gen) write(is *issue) {
	b := &g.b
	fmt.Fprintf(b, "## %s\n\n| Field | Value |\n|-------|-------|\n", is.id)
	row := func(f, v string) {
		b.WriteString("| ")
		b.WriteString(f)
		if v == "" {
			b.WriteString(" | |\n")
			return
		}
		b.WriteString(" | ")
		b.WriteString(v)
		b.WriteString(" |\n")
	}
	// A person filing an issue by hand writes the fields that matter and
	// leaves the rest to their defaults.
	byHand := is.source == "user" && !is.autoRetry && is.attempts == 0
	row("Type", is.typ)
	row("Priority", is.prio)
	row("Status", is.status)
	row("Source", is.source)
	row("Category", is.category)
	row("Created", is.created.Format(time.RFC3339))
	row("Auto-Retry", fmt.Sprint(is.autoRetry))
	if !byHand {
		row("Retry-Count", fmt.Sprint(is.retries))
		if is.maxBlank {
			row("Max-Retries", "")
		} else {
			row("Max-Retries", fmt.Sprint(is.maxRetries))
		}
		sig, prev := "", "[]"
		if n := len(is.sigs); n > 0 {
			sig = is.sigs[n-1]
			prev = "[" + strings.Join(is.sigs[:n-1], ", ") + "]"
		}
		row("Failure-Signature", sig)
		row("Previous-Signatures", prev)
		row("Signature-Repeat-Count", fmt.Sprint(is.repeat))
		row("Halted", fmt.Sprint(is.halted))
	}
	row("Blocking", fmt.Sprint(is.blocking))
	if is.verifyRow && !byHand {
		row("Verify", is.verify)
	}

	k, v := is.kind, is.v
	fmt.Fprintf(b, "\n### Summary\n%s\n", v.expand(k.summary))
	if is.details {
		fence := "```"
		if g.chance(5) {
			fence = "~~~"
		}
		fmt.Fprintf(b, "\n### Failure Details\n%s\n", fence)
		lines := k.details
		if !g.chance(10) {
			lines = k.brief
		}
		for _, l := range lines {
			b.WriteString(v.expand(l))
			b.WriteByte('\n')
		}
		fmt.Fprintf(b, "%s\n", fence)
	}
	if is.verification {
		fmt.Fprintf(b, "\n### Verification Step\n`%s`\n", v.expand(k.verify))
	}
	if is.fix {
		fmt.Fprintf(b, "\n### Suggested Fix\n%s\n", v.expand(k.fix))
	}
	if is.history {
		b.WriteString("\n### Attempt History\n| Attempt | Time | Type | Signature | Error |\n|---|---|---|---|---|\n")
		at := is.created
		for a := range is.attempts {
			at = at.Add(time.Duration(20+g.rng.IntN(90)) * time.Minute)
			// Signatures in history: the distinct ones in order, the
			// last repeated for the trailing run of identical failures.
			s := is.sigs[min(a, len(is.sigs)-1)]
			typ := "verification_failed"
			if g.chance(15) {
				typ = g.pick([]string{"execution_error", "timeout", "architect_rejected"})
			}
			fmt.Fprintf(b, "| %d | %s | %s | %s | %s |\n", a+1, at.Format(time.RFC3339), typ, s[:12],
				strings.ReplaceAll(v.expand(k.errLine), "|", `\|`))
		}
	}
	b.WriteByte('\n')
}

// vars are the names a kind's text is filled in with: {name} stands for
// vars[name].
type vars map[string]string

var (
	pkgs   = []string{"queue", "store", "api", "auth", "worker", "cache", "config", "billing", "search", "notify"}
	nouns  = []string{"Parse", "Retry", "Lookup", "Session", "Token", "Payload", "Index", "Record", "Stream", "Handler", "Backoff", "Upload"}
	verbs  = []string{"Rejects", "Keeps", "Merges", "Expires", "Sorts", "Encodes", "Resumes", "Splits", "Flushes"}
	fields = []string{"listen", "timeout", "retries", "owner", "createdAt", "token", "region", "limit"}
	keys   = []string{"id", "user_id", "created_at", "items", "status", "region"}
)

func (g *gen) vars() vars {
	p := g.pick(pkgs)
	noun := g.pick(nouns)
	itoa := strconv.Itoa
	v := vars{
		"pkg": p, "file": strings.ToLower(noun), "test": "Test" + noun + g.pick(verbs), "fn": noun,
		"field": g.pick(fields), "key": g.pick(keys), "mod": g.pick([]string{"index", "server", "routes", "client", "config"}),
		"line": itoa(12 + g.rng.IntN(400)), "col": itoa(2 + g.rng.IntN(30)), "got": itoa(g.rng.IntN(9)), "want": itoa(1 + g.rng.IntN(9)),
		"idx": itoa(1 + g.rng.IntN(8)), "goid": itoa(1 + g.rng.IntN(300)),
		"dur": fmt.Sprintf("%d.%02ds", g.rng.IntN(3), g.rng.IntN(100)),
	}
	v["len"] = v["idx"]
	return v
}

// expand replaces the {name} placeholders of s; other braces stay.
func (v vars) expand(s string) string {
	var b strings.Builder
	for {
		i := strings.IndexByte(s, '{')
		if i < 0 {
			b.WriteString(s)
			return b.String()
		}
		j := strings.IndexByte(s[i:], '}')
		if j < 0 {
			b.WriteString(s)
			return b.String()
		}
		b.WriteString(s[:i])
		if val, ok := v[s[i+1:i+j]]; ok {
			b.WriteString(val)
		} else {
			b.WriteString(s[i : i+j+1])
		}
		s = s[i+j+1:]
	}
}

// A kind is one sort of failure: how its issue reads.
type kind struct {
	typ     string
	summary string
	brief   []string // the lines that say what failed, as QA often files them
	details []string // the whole output
	verify  string
	fix     string
	errLine string // the Error cell of its Attempt History rows
}

var kinds = []kind{
	{
		typ:     "test",
		summary: "{test} fails in {pkg}: got {got} items, want {want}",
		brief: []string{
			"    {file}_test.go:{line}: {fn}() returned {got} items, want {want}",
			"--- FAIL: {test} ({dur})",
		},
		details: []string{
			"=== RUN   {test}",
			"    {file}_test.go:{line}: {fn}() returned {got} items, want {want}",
			"--- FAIL: {test} ({dur})",
			"FAIL",
			"FAIL\texample.com/app/{pkg}\t{dur}",
		},
		verify:  "go test ./{pkg}/ -run {test}",
		fix:     "`{fn}` drops the last element when the input ends without a newline; keep the tail.",
		errLine: "--- FAIL: {test} ({dur})",
	},
	{
		typ:     "bug",
		summary: "panic: index out of range in {pkg}.{fn}Handler",
		brief: []string{
			"panic: runtime error: index out of range [{idx}] with length {len}",
			"\t/home/ci/src/app/{pkg}/{file}.go:{line} +0x1d",
		},
		details: []string{
			"panic: runtime error: index out of range [{idx}] with length {len}",
			"",
			"goroutine {goid} [running]:",
			"example.com/app/{pkg}.(*{fn}Handler).ServeHTTP(0xc000123456, {0x9c4f20, 0xc0001a2000}, 0xc000214000)",
			"\t/home/ci/src/app/{pkg}/{file}.go:{line} +0x1d",
			"net/http.serverHandler.ServeHTTP({0xc0000c6000}, {0x9c4f20, 0xc0001a2000}, 0xc000214000)",
			"\t/usr/local/go/src/net/http/server.go:3142 +0x8e",
		},
		verify:  "go test ./{pkg}/...",
		fix:     "Check the length of the parts before indexing; an empty `{field}` header yields one part, not two.",
		errLine: "panic: runtime error: index out of range [{idx}] with length {len}",
	},
	{
		typ:     "build",
		summary: "Build fails: Property '{field}' does not exist on type 'Config' (src/{mod}.ts:{line})",
		brief: []string{
			"src/{mod}.ts:{line}:{col} - error TS2339: Property '{field}' does not exist on type 'Config'.",
		},
		details: []string{
			"src/{mod}.ts:{line}:{col} - error TS2339: Property '{field}' does not exist on type 'Config'.",
			"",
			"Found 1 error in src/{mod}.ts:{line}",
			"npm ERR! code 2",
		},
		verify:  "npm run build",
		fix:     "`Config` lost `{field}` in the last refactor; restore it or read it from `options`.",
		errLine: "src/{mod}.ts:{line}:{col} - error TS2339: Property '{field}' does not exist on type 'Config'.",
	},
	{
		typ:     "build",
		summary: "Type 'string | undefined' is not assignable in src/{mod}.ts",
		brief: []string{
			"src/{mod}.ts:{line}:{col} - error TS2322: Type 'string | undefined' is not assignable to type 'string'.",
		},
		details: []string{
			"src/{mod}.ts:{line}:{col} - error TS2322: Type 'string | undefined' is not assignable to type 'string'.",
			"  Type 'undefined' is not assignable to type 'string'.",
			"",
			"Found 1 error in src/{mod}.ts:{line}",
		},
		verify:  "npm run build",
		fix:     "Give `{field}` a default where the options are read instead of asserting it is set.",
		errLine: "error TS2322: Type 'string | undefined' is not assignable to type 'string'.",
	},
	{
		typ:     "bug",
		summary: "KeyError '{key}' in worker.handle for empty payloads",
		brief: []string{
			"  File \"app/{pkg}.py\", line {col}, in handle",
			"KeyError: '{key}'",
		},
		details: []string{
			"Traceback (most recent call last):",
			"  File \"app/worker.py\", line {line}, in run",
			"    result = handler(payload)",
			"  File \"app/{pkg}.py\", line {col}, in handle",
			"    return payload[\"{key}\"]",
			"KeyError: '{key}'",
		},
		verify:  "pytest tests/test_{pkg}.py -q",
		fix:     "Use `payload.get(\"{key}\")` and skip empty payloads; the queue sends them on shutdown.",
		errLine: "KeyError: '{key}'",
	},
	{
		typ:     "test",
		summary: "jest: {file} {pkg} returns {got}, expected {want}",
		brief: []string{
			"  ✕ {file} {pkg} ({line} ms)",
			"    Expected: {want}",
			"    Received: {got}",
		},
		details: []string{
			" FAIL  src/{file}.test.js",
			"  ✕ {file} {pkg} ({line} ms)",
			"    Expected: {want}",
			"    Received: {got}",
			"      at Object.<anonymous> (src/{file}.test.js:{line}:{col})",
		},
		verify:  "npx jest src/{file}.test.js",
		fix:     "The mock clock is not advanced before the assertion; call `jest.advanceTimersByTime` first.",
		errLine: "✕ {file} {pkg} ({line} ms)",
	},
	{
		typ:     "lint",
		summary: "go vet: Sprintf format %d has arg {field} of wrong type in {pkg}",
		brief: []string{
			"{pkg}/{file}.go:{line}:{col}: fmt.Sprintf format %d has arg {field} of wrong type string",
		},
		details: []string{
			"# example.com/app/{pkg}",
			"{pkg}/{file}.go:{line}:{col}: fmt.Sprintf format %d has arg {field} of wrong type string",
			"exit status 1",
		},
		verify:  "go vet ./{pkg}/...",
		fix:     "Use `%s` for `{field}`.",
		errLine: "{pkg}/{file}.go:{line}:{col}: fmt.Sprintf format %d has arg {field} of wrong type string",
	},
	{
		typ:     "security",
		summary: "SQL built by string concatenation in {pkg}/{file}.go",
		brief: []string{
			"[{pkg}/{file}.go:{line}] - G202 (CWE-89): SQL string concatenation (Confidence: HIGH, Severity: MEDIUM)",
		},
		details: []string{
			"[{pkg}/{file}.go:{line}] - G202 (CWE-89): SQL string concatenation (Confidence: HIGH, Severity: MEDIUM)",
			"  > q := \"SELECT * FROM {file} WHERE {key} = '\" + {key} + \"'\"",
			"Summary: Files 41, Lines 9380, Nosec 0, Issues 1",
		},
		verify:  "gosec ./{pkg}/...",
		fix:     "Pass `{key}` as a query parameter (`$1`) instead of concatenating it.",
		errLine: "G202 (CWE-89): SQL string concatenation",
	},
	{
		typ:     "test",
		summary: "{test} times out on CI",
		brief: []string{
			"panic: test timed out after 10m0s",
			"\t{test} (10m0s)",
		},
		details: []string{
			"panic: test timed out after 10m0s",
			"running tests:",
			"\t{test} (10m0s)",
			"",
			"goroutine {goid} [chan receive, 9 minutes]:",
			"example.com/app/{pkg}.{test}(0xc000603a00)",
			"\t/home/ci/src/app/{pkg}/{file}_test.go:{line} +0x2c5",
		},
		verify:  "go test ./{pkg}/ -run {test} -count 3",
		fix:     "The test waits on a channel nobody closes when `{fn}` fails early; close it in a `defer`.",
		errLine: "panic: test timed out after 10m0s",
	},
	{
		typ:     "review",
		summary: "{fn} ignores the error from Close in {pkg}/{file}.go:{line}",
		brief: []string{
			"{pkg}/{file}.go:{line}:{col}: Error return value of `f.Close` is not checked (errcheck)",
		},
		details: []string{
			"{pkg}/{file}.go:{line}:{col}: Error return value of `f.Close` is not checked (errcheck)",
			"\tdefer f.Close()",
			"\t      ^",
		},
		verify:  "golangci-lint run ./{pkg}/...",
		fix:     "Return the error of `Close` on the write path; a failed close can lose data.",
		errLine: "Error return value of `f.Close` is not checked (errcheck)",
	},
}
