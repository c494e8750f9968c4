package agentout

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Invented outputs for cases the real samples do not cover.
var edgeWants = map[string]want{
	"claude-result-limit.jsonl": {at: "2025-06-23T12:00:00Z", agent: KindClaude, cost: 0, hasCost: true, tokens: tok(0, 0, 0, 0), errKind: ErrUsageLimit, limit: true, until: "2025-06-23T15:00:00Z"},
	// The model's own words about limits are not a limit; a message printed
	// once per content block counts once.
	"prose-about-limits.jsonl": {at: "2026-01-01T00:00:00Z", agent: KindClaude, tokens: tok(13, 24, 105, 1)},
	// Turns are summed; reasoning tokens are not added to the output.
	"codex-two-turns.jsonl":    {at: "2026-01-01T00:00:00Z", agent: KindCodex, tokens: tok(3000, 120, 2300, -1), errKind: ErrUsageLimit, limit: true, until: "2026-01-01T01:05:00Z"},
	"admin-disabled.txt":       {at: "2026-01-01T00:00:00Z", tokens: none, errKind: ErrAuth},
	"claude-month-day.txt":     {at: "2026-04-08T09:00:00Z", agent: KindClaude, tokens: none, errKind: ErrUsageLimit, limit: true, until: "2026-04-10T10:00:00Z"},
	"claude-5h-bullet.txt":     {at: "2026-02-01T10:00:00Z", loc: "America/New_York", tokens: none, errKind: ErrUsageLimit, limit: true, until: "2026-02-01T20:00:00Z"},
	"gemini-access-resets.txt": {at: "2026-02-01T20:00:00Z", agent: KindGemini, tokens: none, errKind: ErrUsageLimit, limit: true, until: "2026-02-01T22:55:00Z"},
	"gemini-retry-40s.txt":     {at: "2026-02-01T10:00:30Z", tokens: none, errKind: ErrRateLimit, limit: true, until: "2026-02-01T10:01:00Z"},
	"codex-clock-only.txt":     {at: "2026-02-01T12:00:00Z", loc: "Europe/Berlin", agent: KindCodex, tokens: none, errKind: ErrUsageLimit, limit: true, until: "2026-02-01T13:57:00Z"},
	// A warning about the window is not a limit.
	"claude-window-warning.jsonl": {at: "2026-07-15T00:00:00Z", agent: KindClaude, cost: 0.02, hasCost: true, tokens: tok(4, 5, -1, -1), window: "2026-07-15T01:30:00Z"},
	// Session cost wins over the message cost; "429 received" is a count.
	"aider-two-messages.txt": {at: "2026-01-01T00:00:00Z", agent: KindAider, cost: 0.0081, hasCost: true, tokens: tok(7500, 471, 1200, -1)},
}

func TestEdgeSamples(t *testing.T) {
	files, _ := filepath.Glob("testdata/edge/*")
	if len(files) != len(edgeWants) {
		t.Errorf("%d edge files, %d expected readings", len(files), len(edgeWants))
	}
	for _, f := range files {
		name := filepath.Base(f)
		w, ok := edgeWants[name]
		if !ok {
			t.Errorf("%s: no expected reading", name)
			continue
		}
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		t.Run(name, func(t *testing.T) {
			checkReport(t, readAll(t, name, data, w, 7), w)
		})
	}
}

func TestReportJSON(t *testing.T) {
	r := NewReader(KindAuto, time.Date(2025, 6, 23, 12, 0, 0, 0, time.UTC), nil)
	r.Write([]byte("Claude AI usage limit reached|1750690800\n"))
	var got map[string]any
	if err := json.Unmarshal(r.Report().JSON(), &got); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"agent":    "claude",
		"cost_usd": nil,
		"tokens":   map[string]any{"input": nil, "output": nil, "cache_read": nil, "cache_write": nil},
		"error":    true, "error_kind": "usage_limit",
		"limit": map[string]any{"until": "2025-06-23T15:00:00Z", "text": "Claude AI usage limit reached|1750690800"},
	}
	g, _ := json.Marshal(got)
	wj, _ := json.Marshal(want)
	if !bytes.Equal(g, wj) {
		t.Errorf("JSON\n got %s\nwant %s", g, wj)
	}

	empty := NewReader(KindAuto, time.Time{}, nil).Report().JSON()
	if got, want := string(empty), `{"agent":"none","cost_usd":null,"tokens":{"input":null,"output":null,"cache_read":null,"cache_write":null},"error":false,"error_kind":null,"limit":null}`; got != want {
		t.Errorf("empty report JSON\n got %s\nwant %s", got, want)
	}
}

func TestWindowUsage(t *testing.T) {
	r := NewReader(KindAuto, time.Time{}, nil)
	r.Write([]byte(`{"type":"rate_limit_event","rate_limit_info":{"status":"allowed_warning","resetsAt":1784079000,"rateLimitType":"seven_day","utilization":0.91}}` + "\n"))
	w := r.Report().Window
	if w == nil || w.Name != "seven_day" || w.Used == nil || *w.Used != 0.91 || w.Status != "allowed_warning" {
		t.Errorf("window = %+v", w)
	}
}

func TestParseKind(t *testing.T) {
	for in, want := range map[string]Kind{"": KindAuto, "Claude": KindClaude, " codex ": KindCodex, "none": KindNone, "opencode": KindOpencode} {
		if got, err := ParseKind(in); err != nil || got != want {
			t.Errorf("ParseKind(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	if _, err := ParseKind("cursor"); err == nil {
		t.Error("ParseKind(cursor) accepted an unknown agent")
	}
}

// A named kind is the agent reported; none reads nothing.
func TestExplicitKind(t *testing.T) {
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	r := NewReader(KindCodex, at, nil)
	r.Write([]byte("Claude usage limit reached. Your limit will reset at 9am (America/Chicago).\n"))
	if got := r.Report(); got.Agent != KindCodex || got.Limit == nil {
		t.Errorf("explicit codex: %+v", got)
	}
	r = NewReader(KindNone, at, nil)
	r.Write([]byte("Claude usage limit reached. Your limit will reset at 9am (America/Chicago).\n"))
	if got := r.Report(); got.Limit != nil || got.Error {
		t.Errorf("kind none read the output: %+v", got)
	}
}

// bufferBytes is what the reader holds besides its report.
func (r *Reader) bufferBytes() int {
	n := cap(r.line) + cap(r.tail) + cap(r.doc)
	for _, l := range r.window {
		n += cap(l)
	}
	return n
}

const bufferBound = maxLine + 2*lineTail + maxDoc + windowLen*windowLine + 64<<10

// Memory stays bounded on a 200 MiB stream of every shape: a giant line, a
// JSON document that never ends, many ordinary lines; and what follows is
// still read.
func TestBoundedMemory200MiB(t *testing.T) {
	if testing.Short() {
		t.Skip("streams 200 MiB")
	}
	r := NewReader(KindAuto, time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), nil)
	peak := 0
	write := func(p []byte) {
		r.Write(p)
		peak = max(peak, r.bufferBytes())
	}
	chunk := bytes.Repeat([]byte("x"), 1<<20)
	for i := 0; i < 80; i++ { // an 80 MiB line
		write(chunk)
	}
	write([]byte("\n{\n"))
	row := []byte(`  "response": "` + strings.Repeat("y", 1000) + `",` + "\n")
	for written := 0; written < 60<<20; written += len(row) { // a 60 MiB document
		write(row)
	}
	text := bytes.Repeat([]byte("compiling package without trouble, nothing to report here\n"), 1<<14)
	for written := 0; written < 60<<20; written += len(text) {
		write(text)
	}
	write([]byte(`{"type":"result","subtype":"success","is_error":false,"total_cost_usd":1.25,"usage":{"input_tokens":5,"output_tokens":6}}` + "\n"))
	rep := r.Report()
	if peak > bufferBound {
		t.Errorf("reader held %d bytes, bound %d", peak, bufferBound)
	}
	if rep.CostUSD == nil || *rep.CostUSD != 1.25 || rep.Tokens.Output != 6 {
		t.Errorf("result after 200 MiB not read: %+v", rep)
	}
}

// A result line longer than the line cap still yields its totals.
func TestOverlongResultLine(t *testing.T) {
	line := `{"type":"result","subtype":"success","is_error":false,"result":"` + strings.Repeat("z", 3<<20) +
		`","session_id":"s","total_cost_usd":0.5,"usage":{"input_tokens":7,"output_tokens":8,"cache_read_input_tokens":9,"cache_creation_input_tokens":10}}` + "\n"
	for _, chunk := range []int{len(line), 4096, 1 << 20} {
		r := NewReader(KindAuto, time.Time{}, nil)
		for s := line; len(s) > 0; {
			n := min(chunk, len(s))
			r.Write([]byte(s[:n]))
			s = s[n:]
		}
		rep := r.Report()
		if rep.CostUSD == nil || *rep.CostUSD != 0.5 || rep.Tokens != (Tokens{7, 8, 9, 10, true, true, true, true}) {
			t.Errorf("chunk %d: %+v", chunk, rep)
		}
	}
}

func BenchmarkReaderText(b *testing.B) {
	data := bytes.Repeat([]byte("ok   github.com/x/y  0.412s\n--- FAIL: TestX (0.03s)\nrate limit mentioned in passing\n"), 1<<12)
	benchmarkReader(b, data)
}

func FuzzReader(f *testing.F) {
	for _, dir := range []string{"testdata/real", "testdata/edge"} {
		files, _ := filepath.Glob(filepath.Join(dir, "*"))
		for _, file := range files {
			if data, err := os.ReadFile(file); err == nil {
				f.Add(data, uint16(len(data)/3))
			}
		}
	}
	f.Fuzz(func(t *testing.T, data []byte, split uint16) {
		at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
		whole := NewReader(KindAuto, at, nil)
		whole.Write(data)
		a := whole.Report()
		parts := NewReader(KindAuto, at, nil)
		cut := min(int(split), len(data))
		parts.Write(data[:cut])
		parts.Write(data[cut:])
		b := parts.Report()
		if ja, jb := string(a.JSON()), string(b.JSON()); ja != jb {
			t.Errorf("split at %d changed the report:\n%s\n%s", cut, ja, jb)
		}
	})
}

func BenchmarkReaderPlainLog(b *testing.B) {
	data := bytes.Repeat([]byte("ok   github.com/x/y  0.412s\n--- FAIL: TestX (0.03s)\n    x_test.go:12: got 3, want 4\n"), 1<<12)
	benchmarkReader(b, data)
}

func BenchmarkReaderStreamJSON(b *testing.B) {
	line := []byte(`{"type":"assistant","message":{"id":"msg_1","model":"claude-sonnet-4-5","content":[{"type":"text","text":"` + strings.Repeat("word ", 100) + `"}],"usage":{"input_tokens":10,"output_tokens":20}}}` + "\n")
	data := bytes.Repeat(line, 1<<10)
	benchmarkReader(b, data)
}

// benchmarkReader measures reading data whole, kind detected, into a report.
func benchmarkReader(b *testing.B, data []byte) {
	b.SetBytes(int64(len(data)))
	for i := 0; i < b.N; i++ {
		r := NewReader(KindAuto, time.Time{}, nil)
		r.Write(data)
		r.Report()
	}
}
