package agentout

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// want is the reading a sample must give; PROVENANCE.md states the same.
type want struct {
	at      string // RFC3339
	loc     string // IANA; "" is UTC
	agent   Kind   // "" means not checked (a bare wording names no agent)
	cost    float64
	hasCost bool
	tokens  [4]int64 // input, output, cache read, cache write; -1 = not stated
	errKind string   // "" = no error
	limit   bool
	until   string // RFC3339 to the minute; "" = none stated
	window  string // reset instant of the reported usage window; "" = none
}

func tok(in, out, cr, cw int64) [4]int64 { return [4]int64{in, out, cr, cw} }

var none = tok(-1, -1, -1, -1)

var realWants = map[string]want{
	"claude-limit-epoch-2490.txt":       {at: "2025-06-23T16:24:50Z", agent: KindClaude, tokens: none, errKind: ErrUsageLimit, limit: true, until: "2025-06-23T20:00:00Z"},
	"claude-limit-bogota-2490.txt":      {at: "2025-06-23T16:24:50Z", agent: KindClaude, tokens: none, errKind: ErrUsageLimit, limit: true, until: "2025-06-23T20:00:00Z"},
	"claude-limit-chicago-15064.txt":    {at: "2025-12-22T15:32:14Z", agent: KindClaude, tokens: none, errKind: ErrUsageLimit, limit: true, until: "2025-12-23T15:00:00Z"},
	"claude-429-account-11429.txt":      {at: "2025-11-11T16:40:06Z", tokens: none, errKind: ErrRateLimit, limit: true},
	"claude-limit-calcutta-13632.txt":   {at: "2025-12-11T00:00:00Z", agent: KindClaude, tokens: none, errKind: ErrUsageLimit, limit: true, until: "2025-12-11T06:00:00Z"},
	"claude-hit-limit-moscow-55147.txt": {at: "2026-04-30T00:00:00Z", agent: KindClaude, tokens: none, errKind: ErrUsageLimit, limit: true, until: "2026-04-30T00:30:00Z"},
	"claude-hit-limit-dhaka-54698.txt":  {at: "2026-04-29T14:58:12Z", agent: KindClaude, tokens: none, errKind: ErrUsageLimit, limit: true, until: "2026-04-29T19:30:00Z"},
	"claude-hit-limit-kl-24687.txt":     {at: "2026-01-21T07:34:09Z", agent: KindClaude, tokens: none, errKind: ErrUsageLimit, limit: true, until: "2026-01-21T08:00:00Z"},
	"claude-limit-warsaw-6119.txt":      {at: "2025-08-19T14:08:25Z", agent: KindClaude, tokens: none, errKind: ErrUsageLimit, limit: true, until: "2025-08-19T15:00:00Z"},
	"claude-limit-bucharest-8967.txt":   {at: "2025-10-05T12:55:13Z", agent: KindClaude, tokens: none, errKind: ErrUsageLimit, limit: true, until: "2025-10-06T08:00:00Z"},
	"claude-529-retrying-4064.txt":      {at: "2025-07-21T00:00:00Z", tokens: none, errKind: ErrOverloaded},
	"claude-529-server-side-81327.txt":  {at: "2026-07-26T00:00:00Z", tokens: none, errKind: ErrOverloaded},
	"claude-529-json-39745.txt":         {at: "2026-03-27T00:00:00Z", agent: KindClaude, tokens: none, errKind: ErrOverloaded},
	"claude-stream-rejected-5776.jsonl": {at: "2026-05-12T05:00:00Z", agent: KindClaude, tokens: none, errKind: ErrUsageLimit, limit: true, until: "2026-05-12T06:00:00Z", window: "2026-05-12T06:00:00Z"},
	"claude-stream-allowed-41185.jsonl": {at: "2026-03-30T22:00:00Z", agent: KindClaude, tokens: none, window: "2026-03-31T01:00:00Z"},
	"claude-server-limiting-71503.txt":  {at: "2026-06-26T00:00:00Z", tokens: none, errKind: ErrRateLimit, limit: true},
	"claude-org-disabled-60359.txt":     {at: "2026-05-18T21:48:12Z", tokens: none, errKind: ErrAuth},
	"claude-json-result-vecsum.jsonl":   {at: "2026-01-14T14:22:39Z", agent: KindClaude, cost: 0.0745213, hasCost: true, tokens: tok(6, 583, 42853, 8982)},
	"claude-stream-result-debussy.json": {at: "2026-01-01T00:00:00Z", agent: KindClaude, cost: 0.10457895, hasCost: true, tokens: tok(2, 9, 13368, 7924)},

	"codex-5d22h-3899.txt":               {at: "2025-09-19T00:00:00Z", agent: KindCodex, tokens: none, errKind: ErrUsageLimit, limit: true, until: "2025-09-24T22:11:00Z"},
	"codex-3h2m-3031.txt":                {at: "2025-09-01T00:00:00Z", agent: KindCodex, tokens: none, errKind: ErrUsageLimit, limit: true, until: "2025-09-01T03:02:00Z"},
	"codex-try-again-at-21047.txt":       {at: "2026-05-04T00:00:00Z", agent: KindCodex, tokens: none, errKind: ErrUsageLimit, limit: true, until: "2026-05-11T13:36:00Z"},
	"codex-wait-reset-2669.txt":          {at: "2025-08-25T00:00:00Z", agent: KindCodex, tokens: none, errKind: ErrUsageLimit, limit: true},
	"codex-2d17h-3124.txt":               {at: "2025-09-03T00:00:00Z", agent: KindCodex, tokens: none, errKind: ErrUsageLimit, limit: true, until: "2025-09-05T17:14:00Z"},
	"codex-credits-at-394.txt":           {at: "2026-04-25T00:00:00Z", agent: KindCodex, tokens: none, errKind: ErrUsageLimit, limit: true, until: "2026-04-28T22:03:00Z"},
	"codex-exec-json-agentcmd.jsonl":     {at: "2025-10-29T00:59:38Z", agent: KindCodex, tokens: tok(2946, 7, 0, -1)},
	"codex-exec-json-budget-37676.jsonl": {at: "2026-08-09T00:00:00Z", agent: KindCodex, tokens: none, errKind: ErrExecution},
	"codex-pt-date-28089.txt":            {at: "2026-06-13T15:07:00Z", loc: "America/Sao_Paulo", agent: KindCodex, tokens: none, errKind: ErrUsageLimit, limit: true, until: "2026-07-10T14:52:00Z"},

	"gemini-json-stats-formatter.json":        {at: "2025-10-10T12:00:00Z", agent: KindGemini, tokens: tok(45204, 931, 10656, -1)},
	"gemini-json-error-429-formatter.json":    {at: "2025-10-10T12:00:00Z", agent: KindGemini, tokens: none, errKind: ErrRateLimit, limit: true},
	"gemini-stream-success-formatter.jsonl":   {at: "2025-10-10T12:00:00Z", agent: KindGemini, tokens: tok(50, 50, 0, -1)},
	"gemini-stream-max-turns-formatter.jsonl": {at: "2025-10-10T12:00:00Z", agent: KindGemini, tokens: tok(50, 50, 0, -1), errKind: ErrMaxTurns},
	"gemini-retry-39s-13112.txt":              {at: "2025-11-15T10:00:30Z", agent: KindGemini, tokens: none, errKind: ErrRateLimit, limit: true, until: "2025-11-15T10:01:00Z"},
	"gemini-retry-25s-22486.txt":              {at: "2026-03-12T12:00:00Z", tokens: none, errKind: ErrRateLimit, limit: true, until: "2026-03-12T12:00:00Z"},
	"gemini-exhausted-flash-switch-10717.txt": {at: "2025-10-08T00:00:00Z", agent: KindGemini, tokens: none, errKind: ErrRateLimit, limit: true},
	"gemini-exhausted-wrapped-1800.txt":       {at: "2025-06-26T00:00:00Z", agent: KindGemini, tokens: none, errKind: ErrRateLimit, limit: true},
	"gemini-429-first-request-2020.txt":       {at: "2025-06-26T20:30:31Z", agent: KindGemini, tokens: none, errKind: ErrRateLimit, limit: true},
	"gemini-daily-quota-6962.txt":             {at: "2025-08-24T00:00:00Z", agent: KindGemini, tokens: none, errKind: ErrRateLimit, limit: true},

	"aider-cache-write-2274.txt": {at: "2024-11-06T00:00:00Z", agent: KindAider, cost: 0.79, hasCost: true, tokens: tok(216000, 1400, -1, 108000)},
	"aider-vertex-429-764.txt":   {at: "2024-07-01T00:00:00Z", agent: KindAider, tokens: none, errKind: ErrRateLimit, limit: true},

	"opencode-step-finish-2810.jsonl": {at: "2025-09-26T20:51:38Z", agent: KindOpencode, cost: 0.0070147, hasCost: true, tokens: tok(11087, 145, 0, 0)},
	"opencode-go-429-47747.txt":       {at: "2026-09-07T00:00:00Z", tokens: none, errKind: ErrRateLimit, limit: true},
	"opencode-tpm-21465.txt":          {at: "2026-04-08T00:00:00Z", tokens: none, errKind: ErrRateLimit, limit: true},
	"opencode-retrying-40014.txt":     {at: "2026-08-01T00:00:00Z", tokens: none, errKind: ErrRateLimit, limit: true, until: "2026-08-01T00:59:00Z"},
	"opencode-free-usage-42215.txt":   {at: "2026-08-13T00:00:00Z", tokens: none, errKind: ErrUsageLimit, limit: true},

	// The wordings of limits and costs gathered further: "out of extra usage",
	// dates with "at", zone abbreviations, epochs in wrapped JSON bodies and
	// Aider's cost wrapped onto the next line.
	"claude-extra-usage-9pm-ralph100.txt":    {at: "2026-01-17T00:00:00Z", agent: KindClaude, tokens: none, errKind: ErrUsageLimit, limit: true, until: "2026-01-17T21:00:00Z"},
	"claude-extra-usage-seoul-56219.txt":     {at: "2026-05-05T06:35:43Z", agent: KindClaude, tokens: none, errKind: ErrUsageLimit, limit: true, until: "2026-05-05T10:00:00Z"},
	"claude-extra-usage-budapest-22603.txt":  {at: "2026-02-02T19:49:25Z", agent: KindClaude, tokens: none, errKind: ErrUsageLimit, limit: true, until: "2026-02-04T19:00:00Z"},
	"claude-extra-usage-cordoba-42654.txt":   {at: "2026-04-02T16:11:16Z", agent: KindClaude, tokens: none, errKind: ErrUsageLimit, limit: true, until: "2026-04-03T12:00:00Z"},
	"claude-weekly-sep15-at-92834.txt":       {at: "2026-09-08T00:00:00Z", agent: KindClaude, tokens: none, errKind: ErrUsageLimit, limit: true, until: "2026-09-15T19:00:00Z"},
	"claude-limit-etc-gmt5-2087.txt":         {at: "2025-06-14T17:56:06Z", agent: KindClaude, tokens: none, errKind: ErrUsageLimit, limit: true, until: "2025-06-14T18:00:00Z"},
	"claude-session-limit-tokyo-77082.txt":   {at: "2026-07-13T00:00:00Z", agent: KindClaude, tokens: none, errKind: ErrUsageLimit, limit: true, until: "2026-07-13T11:30:00Z"},
	"claude-limit-santiago-wrapped-9236.txt": {at: "2025-10-09T00:00:00Z", agent: KindClaude, tokens: none, errKind: ErrUsageLimit, limit: true, until: "2025-10-09T18:00:00Z"},
	"claude-weekly-seoul-12789.txt":          {at: "2025-12-01T04:32:07Z", agent: KindClaude, tokens: none, errKind: ErrUsageLimit, limit: true, until: "2025-12-02T01:00:00Z"},
	"codex-have-hit-jul23-pdd2175.txt":       {at: "2026-07-17T00:00:00Z", agent: KindCodex, tokens: none, errKind: ErrUsageLimit, limit: true, until: "2026-07-23T04:15:00Z"},
	"codex-try-again-clock-22650.txt":        {at: "2026-05-14T00:00:00Z", agent: KindCodex, tokens: none, errKind: ErrUsageLimit, limit: true, until: "2026-05-14T18:44:00Z"},
	"codex-jul5-26668.txt":                   {at: "2026-06-05T00:00:00Z", agent: KindCodex, tokens: none, errKind: ErrUsageLimit, limit: true, until: "2026-07-05T20:19:00Z"},
	"codex-429-retry-limit-26057.txt":        {at: "2026-06-03T00:00:00Z", tokens: none, errKind: ErrRateLimit, limit: true},
	"codex-out-of-messages-31567.txt":        {at: "2026-07-08T00:00:00Z", agent: KindCodex, tokens: none, errKind: ErrUsageLimit, limit: true, until: "2026-07-12T05:04:00Z"},
	"codex-resets-at-json-pi4172.txt":        {at: "2026-05-04T19:24:56Z", agent: KindCodex, tokens: none, errKind: ErrUsageLimit, limit: true, until: "2026-05-04T23:16:00Z"},
	"codex-resets-at-split-pi4172.txt":       {at: "2026-05-04T19:24:56Z", agent: KindCodex, tokens: none, errKind: ErrUsageLimit, limit: true, until: "2026-05-04T23:16:00Z"},
	"gemini-access-resets-gmt-3-22643.txt":   {at: "2026-03-16T00:00:00Z", agent: KindGemini, tokens: none, errKind: ErrUsageLimit, limit: true, until: "2026-03-16T01:57:00Z"},
	"gemini-access-resets-pst-built.txt":     {at: "2026-01-15T20:00:00Z", agent: KindGemini, tokens: none, errKind: ErrUsageLimit, limit: true, until: "2026-01-16T01:55:00Z"},
	"gemini-access-resets-pdt-built.txt":     {at: "2026-07-01T12:00:00Z", agent: KindGemini, tokens: none, errKind: ErrUsageLimit, limit: true, until: "2026-07-01T16:05:00Z"},
	"gemini-capacity-2h52m-foundry.txt":      {at: "2026-01-01T10:36:16Z", agent: KindGemini, tokens: none, errKind: ErrUsageLimit, limit: true, until: "2026-01-01T13:28:00Z"},
	"gemini-daily-quota-exhausted-15576.txt": {at: "2025-12-26T00:00:00Z", agent: KindGemini, tokens: none, errKind: ErrUsageLimit, limit: true},
	"aider-session-wrapped-2491.txt":         {at: "2024-11-30T00:00:00Z", agent: KindAider, cost: 3.42, hasCost: true, tokens: tok(1029000, 186, -1, -1)},
	"aider-ratelimit-retry-2491.txt":         {at: "2024-11-30T00:00:00Z", agent: KindAider, tokens: none, errKind: ErrRateLimit, limit: true, until: "2024-11-30T00:00:00Z"},
	"aider-cost-next-line-1854.txt":          {at: "2024-10-01T00:00:00Z", agent: KindAider, cost: 0.21, hasCost: true, tokens: tok(14000, 1100, -1, -1)},
	"aider-token-limit-1919.txt":             {at: "2024-10-04T00:00:00Z", agent: KindAider, cost: 9.68, hasCost: true, tokens: tok(1663000, 0, -1, -1)},
	"opencode-usage-limit-reached-47239.txt": {at: "2026-09-04T00:00:00Z", tokens: none, errKind: ErrUsageLimit, limit: true},
	"opencode-weekly-reset-in-49170.txt":     {at: "2026-09-15T00:00:00Z", tokens: none, errKind: ErrUsageLimit, limit: true, until: "2026-09-20T10:00:00Z"},
	"opencode-monthly-42686.txt":             {at: "2026-08-15T00:00:00Z", tokens: none, errKind: ErrUsageLimit, limit: true, until: "2026-08-25T19:00:00Z"},
}

func mustTime(t *testing.T, s string) time.Time {
	t.Helper()
	v, err := time.Parse(time.RFC3339, s)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func readAll(t *testing.T, name string, data []byte, w want, chunk int) Report {
	t.Helper()
	loc := time.UTC
	if w.loc != "" {
		var err error
		if loc, err = time.LoadLocation(w.loc); err != nil {
			t.Fatal(err)
		}
	}
	r := NewReader(KindAuto, mustTime(t, w.at), loc)
	for len(data) > 0 {
		n := min(chunk, len(data))
		r.Write(data[:n])
		data = data[n:]
	}
	return r.Report()
}

func checkReport(t *testing.T, got Report, w want) {
	t.Helper()
	if w.agent != "" && got.Agent != w.agent {
		t.Errorf("agent = %q, want %q", got.Agent, w.agent)
	}
	switch {
	case w.hasCost && got.CostUSD == nil:
		t.Errorf("cost = none, want %v", w.cost)
	case w.hasCost && math.Abs(*got.CostUSD-w.cost) > 0.01:
		t.Errorf("cost = %v, want %v", *got.CostUSD, w.cost)
	case !w.hasCost && got.CostUSD != nil:
		t.Errorf("cost = %v, want none (never invented)", *got.CostUSD)
	}
	tk := got.Tokens
	gotTok := [4]int64{-1, -1, -1, -1}
	if tk.HasInput {
		gotTok[0] = tk.Input
	}
	if tk.HasOutput {
		gotTok[1] = tk.Output
	}
	if tk.HasCacheRead {
		gotTok[2] = tk.CacheRead
	}
	if tk.HasCacheWrite {
		gotTok[3] = tk.CacheWrite
	}
	if gotTok != w.tokens {
		t.Errorf("tokens (in, out, cache read, cache write) = %v, want %v (-1: not stated)", gotTok, w.tokens)
	}
	if got.Error != (w.errKind != "") || got.ErrorKind != w.errKind {
		t.Errorf("error = %v %q, want %q", got.Error, got.ErrorKind, w.errKind)
	}
	if (got.Limit != nil) != w.limit {
		t.Fatalf("limit = %+v, want limit %v", got.Limit, w.limit)
	}
	if got.Limit != nil {
		until := ""
		if !got.Limit.Until.IsZero() {
			until = got.Limit.Until.UTC().Truncate(time.Minute).Format(time.RFC3339)
		}
		if until != w.until {
			t.Errorf("limit until = %q, want %q (text %q)", until, w.until, got.Limit.Text)
		}
	}
	if w.window != "" {
		if got.Window == nil || !got.Window.ResetsAt.Equal(mustTime(t, w.window)) {
			t.Errorf("window = %+v, want reset at %s", got.Window, w.window)
		}
	}
}

// Every real sample reads as its provenance says, whole and byte by byte.
func TestRealSamples(t *testing.T) {
	files, err := filepath.Glob("testdata/real/*")
	if err != nil {
		t.Fatal(err)
	}
	seen := 0
	perAgent := map[string]int{}
	for _, f := range files {
		name := filepath.Base(f)
		if name == "PROVENANCE.md" {
			continue
		}
		w, ok := realWants[name]
		if !ok {
			t.Errorf("%s: no expected reading", name)
			continue
		}
		seen++
		perAgent[strings.SplitN(name, "-", 2)[0]]++
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		t.Run(name, func(t *testing.T) {
			whole := readAll(t, name, data, w, len(data)+1)
			checkReport(t, whole, w)
			bytewise := readAll(t, name, data, w, 1)
			if a, b := string(whole.JSON()), string(bytewise.JSON()); a != b {
				t.Errorf("byte by byte:\n%s\nwhole:\n%s", b, a)
			}
		})
	}
	if seen != len(realWants) {
		t.Errorf("%d samples on disk, %d expected readings", seen, len(realWants))
	}
	if seen < 30 {
		t.Errorf("only %d real samples", seen)
	}
	t.Logf("samples per agent: %v", perAgent)
}
