package metrics_test

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/autoretry/orchestrator/internal/views/metrics"
	"github.com/autoretry/orchestrator/issuequeue"
	"github.com/autoretry/orchestrator/orchestrator"
)

var t0 = time.Date(2026, 11, 20, 10, 0, 0, 0, time.UTC)

func at(min int) time.Time { return t0.Add(time.Duration(min) * time.Minute) }

// fixture writes a state directory through the real writers: history.csv
// rows, retry-log events and a queue.
func fixture(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	rows := []orchestrator.LoopRecord{
		// Run A: a regular loop, an auto-retry loop whose transient failure
		// persisted after 2 retries, one that worked after 1.
		{RunID: "A", Loop: 1, Kind: "regular", Started: at(0), Finished: at(10), Result: orchestrator.ResultOK, Breaker: "closed"},
		{RunID: "A", Loop: 2, Kind: "auto_retry", Started: at(10), Finished: at(25), ExitCode: 1, Result: orchestrator.ResultFailed,
			TransientRetries: 2, Issues: []string{"ISSUE-20261120-001"}, TotalAutoRetries: 1, Breaker: "closed"},
		{RunID: "A", Loop: 3, Kind: "auto_retry", Started: at(25), Finished: at(40), Result: orchestrator.ResultOK,
			TransientRetries: 1, Issues: []string{"ISSUE-20261120-001"}, Resolved: []string{"ISSUE-20261120-001"}, TotalAutoRetries: 2, Breaker: "closed"},
		// Run B: a timeout, then an aborted loop after a transient retry
		// (neither a success nor a failure of the retry).
		{RunID: "B", Loop: 1, Kind: "regular", Started: at(60), Finished: at(90), ExitCode: -1, Result: orchestrator.ResultTimeout, Breaker: "closed"},
		{RunID: "B", Loop: 2, Kind: "auto_retry", Started: at(90), Finished: at(95), ExitCode: -1, Result: orchestrator.ResultAborted,
			TransientRetries: 1, TotalAutoRetries: 1, Breaker: "closed"},
		// Run C: a permanent error at once, and a row whose result no
		// version of the tool writes.
		{RunID: "C", Loop: 1, Kind: "regular", Started: at(120), Finished: at(121), ExitCode: 127, Result: orchestrator.ResultPermanent, Breaker: "closed"},
		{RunID: "C", Loop: 2, Kind: "auto_retry", Started: at(121), Finished: at(122), ExitCode: 2, Result: "exploded",
			TotalAutoRetries: 3, Breaker: "open"},
	}
	for _, r := range rows {
		if err := orchestrator.AppendHistory(dir, r); err != nil {
			t.Fatal(err)
		}
	}
	log := orchestrator.EventLog{Dir: dir}
	evs := []orchestrator.Event{
		// 001: two triggers, resolved at the third attempt: a retry success,
		// in retry for 40-12 = 28 minutes.
		{Time: at(12), Event: orchestrator.EvTriggered, IssueID: "ISSUE-20261120-001", Attempt: 1},
		{Time: at(20), Event: orchestrator.EvTransient, Loop: 2, Attempt: 1, DurationMS: 1000},
		{Time: at(21), Event: orchestrator.EvTransient, Loop: 2, Attempt: 2, DurationMS: 2200},
		{Time: at(24), Event: orchestrator.EvAttempt, IssueID: "ISSUE-20261120-001", Attempt: 1, Status: "failed", Signature: strings.Repeat("a", 64)},
		{Time: at(26), Event: orchestrator.EvTriggered, IssueID: "ISSUE-20261120-001", Attempt: 2},
		{Time: at(30), Event: orchestrator.EvTransient, Loop: 3, Attempt: 1, DurationMS: 45000},
		{Time: at(40), Event: orchestrator.EvResolved, IssueID: "ISSUE-20261120-001", Resolution: "resolved", TotalAttempts: 3},
		// 002: triggered, halted for the same failure: a retry failure after
		// 100-62 = 38 minutes.
		{Time: at(62), Event: orchestrator.EvTriggered, IssueID: "ISSUE-20261120-002", Attempt: 1},
		{Time: at(92), Event: orchestrator.EvTransient, Loop: 2, Attempt: 1, DurationMS: 3_600_000},
		{Time: at(100), Event: orchestrator.EvEscalated, IssueID: "ISSUE-20261120-002", Reason: "same_failure_repeated", RepeatCount: 3},
		// 003: fixed without a retry: no success, no duration.
		{Time: at(101), Event: orchestrator.EvResolved, IssueID: "ISSUE-20261120-003", Resolution: "resolved", TotalAttempts: 1},
		// 004: escalated by a permanent error: not a retry failure.
		{Time: at(121), Event: orchestrator.EvEscalated, IssueID: "ISSUE-20261120-004", Reason: "permanent_error"},
		// 005: triggered at 122 (logged out of order), skipped by a person
		// at 130: 8 minutes, no success.
		{Time: at(130), Event: orchestrator.EvResolved, IssueID: "ISSUE-20261120-005", Resolution: "skipped", TotalAttempts: 1},
		{Time: at(122), Event: orchestrator.EvTriggered, IssueID: "ISSUE-20261120-005", Attempt: 1},
		// 006: retries exhausted, triggered 10 days before: above the
		// largest duration bucket.
		{Time: at(-14400), Event: orchestrator.EvTriggered, IssueID: "ISSUE-20261120-006", Attempt: 1},
		{Time: at(131), Event: orchestrator.EvEscalated, IssueID: "ISSUE-20261120-006", Reason: "max_retries_exceeded", TotalAttempts: 10},
	}
	for _, ev := range evs {
		if err := log.Record(ev); err != nil {
			t.Fatal(err)
		}
	}
	queue := "# Issue Queue\n\n" +
		issueMD("ISSUE-20261120-001", "resolved", false) +
		issueMD("ISSUE-20261120-002", "escalated", true) +
		issueMD("ISSUE-20261120-003", "resolved", false) +
		issueMD("ISSUE-20261120-007", "pending", false) +
		issueMD("ISSUE-20261120-008", "in_progress", false) +
		issueMD("ISSUE-20261120-009", "pendng", false) // quarantined, in no status
	if err := os.WriteFile(filepath.Join(dir, issuequeue.QueueFile), []byte(queue), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

func issueMD(id, status string, halted bool) string {
	return fmt.Sprintf("## %s\n\n| Field | Value |\n|-------|-------|\n| Status | %s |\n| Auto-Retry | true |\n| Halted | %t |\n\n### Summary\nsomething broke\n\n",
		id, status, halted)
}

// want is every sample the fixture must produce, and nothing else.
var want = map[string]float64{
	`orchestrator_task_retry_attempts_total{kind="auto_retry"}`: 5, // triggered events
	`orchestrator_task_retry_attempts_total{kind="transient"}`:  4, // 2+1+1 in history.csv
	`orchestrator_task_retry_success_total{kind="auto_retry"}`:  1, // 001
	`orchestrator_task_retry_success_total{kind="transient"}`:   1, // A/3
	`orchestrator_task_retry_failure_total{kind="auto_retry"}`:  2, // 002, 006
	`orchestrator_task_retry_failure_total{kind="transient"}`:   1, // A/2
	`orchestrator_task_retry_immediate_failure_total`:           1, // C/1

	// Delays 1 s, 2.2 s, 45 s, 3600 s.
	`orchestrator_task_retry_delay_seconds_bucket{le="0.5"}`:  0,
	`orchestrator_task_retry_delay_seconds_bucket{le="1"}`:    1,
	`orchestrator_task_retry_delay_seconds_bucket{le="2"}`:    1,
	`orchestrator_task_retry_delay_seconds_bucket{le="4"}`:    2,
	`orchestrator_task_retry_delay_seconds_bucket{le="8"}`:    2,
	`orchestrator_task_retry_delay_seconds_bucket{le="16"}`:   2,
	`orchestrator_task_retry_delay_seconds_bucket{le="32"}`:   2,
	`orchestrator_task_retry_delay_seconds_bucket{le="64"}`:   3,
	`orchestrator_task_retry_delay_seconds_bucket{le="128"}`:  3,
	`orchestrator_task_retry_delay_seconds_bucket{le="300"}`:  3,
	`orchestrator_task_retry_delay_seconds_bucket{le="900"}`:  3,
	`orchestrator_task_retry_delay_seconds_bucket{le="3600"}`: 4,
	`orchestrator_task_retry_delay_seconds_bucket{le="+Inf"}`: 4,
	`orchestrator_task_retry_delay_seconds_sum`:               3648.2,
	`orchestrator_task_retry_delay_seconds_count`:             4,

	// Durations 28 min, 38 min, 8 min (005), 10 days + 131 min (006).
	`orchestrator_task_retry_duration_seconds_bucket{le="60"}`:     0,
	`orchestrator_task_retry_duration_seconds_bucket{le="300"}`:    0,
	`orchestrator_task_retry_duration_seconds_bucket{le="900"}`:    1,
	`orchestrator_task_retry_duration_seconds_bucket{le="1800"}`:   2,
	`orchestrator_task_retry_duration_seconds_bucket{le="3600"}`:   3,
	`orchestrator_task_retry_duration_seconds_bucket{le="7200"}`:   3,
	`orchestrator_task_retry_duration_seconds_bucket{le="14400"}`:  3,
	`orchestrator_task_retry_duration_seconds_bucket{le="43200"}`:  3,
	`orchestrator_task_retry_duration_seconds_bucket{le="86400"}`:  3,
	`orchestrator_task_retry_duration_seconds_bucket{le="259200"}`: 3,
	`orchestrator_task_retry_duration_seconds_bucket{le="604800"}`: 3,
	`orchestrator_task_retry_duration_seconds_bucket{le="+Inf"}`:   4,
	`orchestrator_task_retry_duration_seconds_sum`:                 (28 + 38 + 8 + 14400 + 131) * 60,
	`orchestrator_task_retry_duration_seconds_count`:               4,

	`orchestrator_runs_total`:                             3,
	`orchestrator_loops_total`:                            7,
	`orchestrator_auto_retry_loops_total`:                 4,
	`orchestrator_failed_loops_total{result="failed"}`:    1,
	`orchestrator_failed_loops_total{result="timeout"}`:   1,
	`orchestrator_failed_loops_total{result="permanent"}`: 1,
	`orchestrator_failed_loops_total{result="aborted"}`:   1,
	`orchestrator_failed_loops_total{result="unknown"}`:   1,
	`orchestrator_last_loop_finished_timestamp_seconds`:   float64(at(122).Unix()),
	`orchestrator_run_auto_retries`:                       3,
	`orchestrator_circuit_breaker_open`:                   1,
	`orchestrator_issues{status="pending"}`:               1,
	`orchestrator_issues{status="in_progress"}`:           1,
	`orchestrator_issues{status="resolved"}`:              2,
	`orchestrator_issues{status="escalated"}`:             1,
	`orchestrator_issues{status="skipped"}`:               0,
	`orchestrator_halted_issues`:                          1,
	`orchestrator_quarantined_issues`:                     1,
}

func snapshotOf(t *testing.T, dir string) metrics.Snapshot {
	t.Helper()
	hist, errs := orchestrator.ReadHistory(dir)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	evs, errs := orchestrator.ReadEvents(dir)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	q, _, err := issuequeue.Paths{Dir: dir}.Load()
	if err != nil {
		t.Fatal(err)
	}
	if err := q.Err(); err != nil {
		t.Fatal(err)
	}
	s := metrics.Compute(hist, evs)
	s.SetQueue(q)
	return s
}

// TestWriteFileValues proves the [metrics] textfile: the
// counters and histograms, derived from history.csv, the retry log and the
// queue, in a valid text exposition.
func TestWriteFileValues(t *testing.T) {
	dir := fixture(t)
	path := filepath.Join(t.TempDir(), "orchestrator.prom")
	if err := metrics.WriteFile(path, snapshotOf(t, dir)); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	got, err := parseExposition(b)
	if err != nil {
		t.Fatalf("invalid exposition: %v\n%s", err, b)
	}
	keys := func(m map[string]float64) []string {
		var k []string
		for s := range m {
			k = append(k, s)
		}
		sort.Strings(k)
		return k
	}
	for _, k := range keys(want) {
		v, ok := got.samples[k]
		if !ok {
			t.Errorf("missing sample %s", k)
			continue
		}
		if v != want[k] {
			t.Errorf("%s = %v, want %v", k, v, want[k])
		}
	}
	for _, k := range keys(got.samples) {
		if _, ok := want[k]; !ok {
			t.Errorf("unexpected sample %s = %v", k, got.samples[k])
		}
	}
	for _, f := range []string{"task_retry_attempts_total", "task_retry_success_total", "task_retry_failure_total",
		"task_retry_immediate_failure_total", "runs_total", "loops_total", "auto_retry_loops_total", "failed_loops_total"} {
		if got, want := got.types[metrics.Prefix+f], "counter"; got != want {
			t.Errorf("TYPE of %s = %q, want %q", f, got, want)
		}
	}
	for _, f := range []string{"task_retry_delay_seconds", "task_retry_duration_seconds"} {
		if got, want := got.types[metrics.Prefix+f], "histogram"; got != want {
			t.Errorf("TYPE of %s = %q, want %q", f, got, want)
		}
	}
}

// A fresh state directory has zero counters, empty histograms, a closed
// breaker and no gauges that would describe a loop that never ran.
func TestEmpty(t *testing.T) {
	var buf bytes.Buffer
	if _, err := metrics.Compute(nil, nil).WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	got, err := parseExposition(buf.Bytes())
	if err != nil {
		t.Fatalf("invalid exposition: %v\n%s", err, buf.Bytes())
	}
	for k, v := range got.samples {
		if v != 0 {
			t.Errorf("%s = %v, want 0", k, v)
		}
	}
	for _, absent := range []string{"orchestrator_last_loop_finished_timestamp_seconds", "orchestrator_run_auto_retries",
		`orchestrator_issues{status="pending"}`, "orchestrator_halted_issues"} {
		if _, ok := got.samples[absent]; ok {
			t.Errorf("%s written without its source", absent)
		}
	}
	if _, ok := got.samples[`orchestrator_task_retry_delay_seconds_bucket{le="+Inf"}`]; !ok {
		t.Error("empty histogram lacks its +Inf bucket")
	}
}

// WriteFile replaces the file in one rename: an old file is replaced
// whole, no temporary file is left behind, and the mode lets
// node_exporter read it.
func TestWriteFileReplaces(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "orchestrator.prom")
	if err := os.WriteFile(path, bytes.Repeat([]byte("stale line\n"), 10000), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := metrics.WriteFile(path, metrics.Compute(nil, nil)); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(b, []byte("stale")) {
		t.Error("old content survived")
	}
	if _, err := parseExposition(b); err != nil {
		t.Error(err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := fi.Mode().Perm(), os.FileMode(0o644); got != want {
		t.Errorf("mode %v, want %v", got, want)
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := len(ents), 1; got != want {
		t.Errorf("%d files in the directory, want %d (temporary files left?)", got, want)
	}
}

func TestWriteFileMissingDir(t *testing.T) {
	path := filepath.Join(t.TempDir(), "no", "such", "dir", "o.prom")
	err := metrics.WriteFile(path, metrics.Compute(nil, nil))
	if err == nil {
		t.Fatal("no error for a missing directory")
	}
	if !errors.Is(err, os.ErrNotExist) {
		t.Errorf("error %v does not wrap fs.ErrNotExist", err)
	}
}

// exposition is a parsed text exposition: samples keyed by their name and
// labels as written, and the TYPE of each family.
type exposition struct {
	samples map[string]float64
	types   map[string]string
}

// parseExposition parses the Prometheus text format strictly enough to
// catch what node_exporter would reject: HELP and TYPE once per family and
// before its samples, valid names and label syntax, no duplicate samples,
// histogram buckets ascending and cumulative with a +Inf bucket equal to
// _count.
func parseExposition(b []byte) (*exposition, error) {
	e := &exposition{samples: map[string]float64{}, types: map[string]string{}}
	helps := map[string]bool{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	if len(b) > 0 && b[len(b)-1] != '\n' {
		return nil, errors.New("no final newline")
	}
	type hist struct {
		lastLE, lastCount float64
		inf               float64
		hasInf            bool
	}
	hists := map[string]*hist{}
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if strings.HasPrefix(line, "#") {
			f := strings.SplitN(line, " ", 4)
			if len(f) < 4 || (f[1] != "HELP" && f[1] != "TYPE") {
				return nil, fmt.Errorf("line %d: bad comment %q", n, line)
			}
			if !validName(f[2]) {
				return nil, fmt.Errorf("line %d: bad metric name %q", n, f[2])
			}
			if f[1] == "HELP" {
				if helps[f[2]] {
					return nil, fmt.Errorf("line %d: second HELP for %s", n, f[2])
				}
				helps[f[2]] = true
				continue
			}
			if _, dup := e.types[f[2]]; dup {
				return nil, fmt.Errorf("line %d: second TYPE for %s", n, f[2])
			}
			switch f[3] {
			case "counter", "gauge", "histogram", "summary", "untyped":
			default:
				return nil, fmt.Errorf("line %d: bad type %q", n, f[3])
			}
			e.types[f[2]] = f[3]
			continue
		}
		name, labels, rest, err := splitSample(line)
		if err != nil {
			return nil, fmt.Errorf("line %d: %v", n, err)
		}
		v, err := strconv.ParseFloat(strings.TrimSpace(rest), 64)
		if err != nil {
			return nil, fmt.Errorf("line %d: bad value in %q", n, line)
		}
		family := name
		typ, ok := e.types[name]
		if !ok {
			for _, suf := range []string{"_bucket", "_sum", "_count"} {
				if f := strings.TrimSuffix(name, suf); f != name && e.types[f] == "histogram" {
					family, typ, ok = f, "histogram", true
				}
			}
		}
		if !ok {
			return nil, fmt.Errorf("line %d: sample %s before its TYPE", n, name)
		}
		if !helps[family] {
			return nil, fmt.Errorf("line %d: sample %s without HELP", n, name)
		}
		if typ == "counter" && !strings.HasSuffix(name, "_total") {
			return nil, fmt.Errorf("line %d: counter %s does not end in _total", n, name)
		}
		if (typ == "counter" || typ == "histogram") && v < 0 {
			return nil, fmt.Errorf("line %d: negative %s", n, typ)
		}
		key := name + labels
		if _, dup := e.samples[key]; dup {
			return nil, fmt.Errorf("line %d: duplicate sample %s", n, key)
		}
		e.samples[key] = v
		if strings.HasSuffix(name, "_bucket") && typ == "histogram" {
			h := hists[family]
			if h == nil {
				h = &hist{lastLE: -1}
				hists[family] = h
			}
			le := strings.TrimSuffix(strings.TrimPrefix(labels, `{le="`), `"}`)
			if le == "+Inf" {
				h.inf, h.hasInf = v, true
			} else {
				x, err := strconv.ParseFloat(le, 64)
				if err != nil || x <= h.lastLE || h.hasInf {
					return nil, fmt.Errorf("line %d: bucket bounds not ascending", n)
				}
				h.lastLE = x
			}
			if v < h.lastCount {
				return nil, fmt.Errorf("line %d: buckets not cumulative", n)
			}
			h.lastCount = v
		}
	}
	for f, h := range hists {
		if !h.hasInf {
			return nil, fmt.Errorf("%s has no +Inf bucket", f)
		}
		if c := e.samples[f+"_count"]; c != h.inf {
			return nil, fmt.Errorf("%s: +Inf bucket %v != _count %v", f, h.inf, c)
		}
	}
	return e, sc.Err()
}

func validName(s string) bool {
	for i, r := range s {
		ok := r == '_' || r == ':' || ('a' <= r && r <= 'z') || ('A' <= r && r <= 'Z') || (i > 0 && '0' <= r && r <= '9')
		if !ok {
			return false
		}
	}
	return s != ""
}

// splitSample splits `name{a="x",b="y"} value` into the name, the label
// block exactly as written (checked for syntax) and the value text.
func splitSample(line string) (name, labels, rest string, err error) {
	i := strings.IndexAny(line, "{ ")
	if i < 0 {
		return "", "", "", fmt.Errorf("no value in %q", line)
	}
	name = line[:i]
	if !validName(name) {
		return "", "", "", fmt.Errorf("bad metric name %q", name)
	}
	if line[i] == ' ' {
		return name, "", line[i+1:], nil
	}
	j := i + 1
	for {
		k := j
		for k < len(line) && line[k] != '=' {
			k++
		}
		if k >= len(line) || !validName(line[j:k]) || k+1 >= len(line) || line[k+1] != '"' {
			return "", "", "", fmt.Errorf("bad label in %q", line)
		}
		k += 2
		for k < len(line) && line[k] != '"' {
			if line[k] == '\\' {
				k++
			}
			k++
		}
		if k >= len(line) {
			return "", "", "", fmt.Errorf("unterminated label value in %q", line)
		}
		k++
		if k < len(line) && line[k] == ',' {
			j = k + 1
			continue
		}
		if k >= len(line) || line[k] != '}' || k+1 >= len(line) || line[k+1] != ' ' {
			return "", "", "", fmt.Errorf("bad label block in %q", line)
		}
		return name, line[i : k+1], line[k+2:], nil
	}
}

// The daily budgets are exported as gauges: used, limit and spent, by key.
func TestBudgetGauges(t *testing.T) {
	s := metrics.Compute(nil, nil)
	s.SetBudgets([]orchestrator.Budget{
		{Code: orchestrator.CodeDailyLoops, Key: "loops_per_day", Used: 200, Limit: 200, Spent: true},
		{Code: orchestrator.CodeDailyCost, Key: "cost_per_day", Used: 1.25, Limit: 0},
	})
	var b strings.Builder
	if _, err := s.WriteTo(&b); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		`orchestrator_budget_used{budget="loops_per_day"} 200`,
		`orchestrator_budget_limit{budget="loops_per_day"} 200`,
		`orchestrator_budget_spent{budget="loops_per_day"} 1`,
		`orchestrator_budget_used{budget="cost_per_day"} 1.25`,
		`orchestrator_budget_spent{budget="cost_per_day"} 0`,
	} {
		if !strings.Contains(b.String(), want+"\n") {
			t.Errorf("missing %q in\n%s", want, b.String())
		}
	}
}
