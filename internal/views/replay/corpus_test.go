package replay

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// knownFalseStops are the productive histories our default rules stop,
// each for a rule it meets by design; the figure published in
// docs/stop-rules.md counts them. A history that leaves this list (a rule
// changed) must be taken off it, and no other may join it.
var knownFalseStops = map[string]string{
	"inc-planning-loops-without-file-changes": "no_change: two planning loops in a row leave the workspace as they found it",
	"syn-progress-only-in-commits":            "repeated_failure: the same failure three times, whatever each loop committed",
}

// The corpus: its make-up, every history decided under its own config as
// recorded, no runaway missed and no productive history stopped beyond
// the known ones; and each, made into a history again from the event log
// the engine wrote, replays with no difference: the log keeps what every
// rule needs.
func TestCorpus(t *testing.T) {
	hs, err := Corpus(filepath.Join("..", "..", "..", "bench", "histories"))
	if err != nil {
		t.Fatal(err)
	}
	kinds, productive := map[string]int{}, 0
	for _, h := range hs {
		kinds[h.Kind]++
		if h.Productive() {
			productive++
		}
		if h.Why == "" || h.Source == "" {
			t.Errorf("%s: says neither why its label nor where it comes from", h.Name)
		}
		if h.Kind == KindIncident && !strings.Contains(h.Source, "github.com/") && !strings.Contains(h.Source, "://") {
			t.Errorf("%s: an incident cites no address: %q", h.Name, h.Source)
		}
		if len(h.Recorded) == 0 {
			t.Errorf("%s: nothing recorded (go run ./bench/stops -record)", h.Name)
		}
	}
	if len(hs) < 40 || kinds[KindRecorded] < 15 || productive < 8 {
		t.Errorf("%d histories, %d recorded, %d productive; want at least 40, 15 and 8", len(hs), kinds[KindRecorded], productive)
	}
	scores := make([]Score, len(hs))
	for i, h := range hs {
		t.Run(h.Name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			p, err := PlayIn(context.Background(), h, nil, dir)
			if err != nil {
				t.Fatal(err)
			}
			if d := Compare(h, h.Recorded, p); len(d) > 0 {
				t.Errorf("decided otherwise than recorded: %+v", d)
			}
			s := ScoreOf(h, p)
			scores[i] = s
			_, known := knownFalseStops[h.Name]
			switch {
			case s.Verdict == VerdictMissed:
				t.Errorf("runaway missed: label %s, never stopped", h.Label)
			case s.Verdict == VerdictFalseStop && !known:
				t.Errorf("productive history stopped at loop %d (%s)", s.Stop.Loop, s.Stop.Code)
			case known && s.Verdict != VerdictFalseStop:
				t.Errorf("no longer stopped (%s): take it off knownFalseStops", s.Verdict)
			}
			state := filepath.Join(dir, ".orchestrator")
			if err := os.WriteFile(filepath.Join(state, "config.toml"), []byte(h.Config), 0o644); err != nil {
				t.Fatal(err)
			}
			logged, err := FromLog(state, time.Time{})
			if err != nil {
				t.Fatal(err)
			}
			if d := Compare(logged, logged.Recorded, play(t, logged, "")); len(d) != 0 {
				t.Errorf("replayed from its log: %+v", d)
			}
		})
	}
	t.Cleanup(func() { t.Log(TotalsOf("ours", scores)) })
}
