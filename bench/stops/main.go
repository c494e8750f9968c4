// Command stops replays the corpus of loop histories (bench/histories)
// under our default rules and under each peer rule set (bench/peers), and
// prints where each stopped every history: one table for ours, one line
// per history across the rule sets, and a totals line per rule set:
//
//	ours: caught N/M, median K loops, false stops F (...)
//	peer NAME: caught N/M, median K loops, false stops F (...)
//
// With -record it writes what our rules decided, run by run, into each
// history's "recorded" field instead, as the baseline that replay under a
// history's own config must reproduce.
//
// Usage:
//
//	stops [-histories DIR] [-peers DIR] [-record]
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"

	"github.com/autoretry/orchestrator/internal/foundations/columns"
	"github.com/autoretry/orchestrator/internal/views/replay"
)

func main() {
	histories := flag.String("histories", "bench/histories", "the corpus")
	peers := flag.String("peers", "bench/peers", "the peer rule sets, one NAME.toml each")
	record := flag.Bool("record", false, "write our decisions into each history's recorded field")
	flag.Parse()
	if err := run(os.Stdout, *histories, *peers, *record); err != nil {
		fmt.Fprintln(os.Stderr, "stops:", err)
		os.Exit(1)
	}
}

// ruleSet is a set of rules to judge the corpus by: ours (no file) or a
// peer's.
type ruleSet struct {
	name, file string
}

func run(w io.Writer, dir, peerDir string, record bool) error {
	hs, err := replay.Corpus(dir)
	if err != nil {
		return err
	}
	if record {
		return writeRecorded(hs)
	}
	sets := []ruleSet{{name: "ours"}}
	files, err := filepath.Glob(filepath.Join(peerDir, "*.toml"))
	if err != nil {
		return err
	}
	sort.Strings(files)
	for _, f := range files {
		sets = append(sets, ruleSet{name: "peer " + strings.TrimSuffix(filepath.Base(f), ".toml"), file: f})
	}
	scores, err := playAll(hs, sets)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "%d histories (%s), under our default rules:\n\n", len(hs), composition(hs))
	if err := replay.WriteTable(w, scores[0]); err != nil {
		return err
	}
	fmt.Fprintf(w, "\nWhere each rule set stopped each history (loop; * false stop, ! caught late, - missed):\n\n")
	if err := writeMatrix(w, hs, sets, scores); err != nil {
		return err
	}
	fmt.Fprintln(w)
	for i, s := range sets {
		fmt.Fprintln(w, replay.TotalsOf(s.name, scores[i]))
	}
	return nil
}

// composition counts the corpus's kinds and its productive histories.
func composition(hs []*replay.History) string {
	kinds := map[string]int{}
	productive := 0
	for _, h := range hs {
		kinds[h.Kind]++
		if h.Productive() {
			productive++
		}
	}
	return fmt.Sprintf("%d recorded, %d incident, %d synthetic; %d productive", kinds[replay.KindRecorded], kinds[replay.KindIncident],
		kinds[replay.KindSynthetic], productive)
}

// playAll plays every history under every rule set, a few at a time;
// scores[set][history].
func playAll(hs []*replay.History, sets []ruleSet) ([][]replay.Score, error) {
	scores := make([][]replay.Score, len(sets))
	for i := range scores {
		scores[i] = make([]replay.Score, len(hs))
	}
	type job struct{ set, h int }
	jobs := make(chan job)
	var mu sync.Mutex
	var first error
	var wg sync.WaitGroup
	for range runtime.GOMAXPROCS(0) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range jobs {
				s, err := score(hs[j.h], sets[j.set].file)
				mu.Lock()
				if err != nil && first == nil {
					first = err
				}
				scores[j.set][j.h] = s
				mu.Unlock()
			}
		}()
	}
	for si := range sets {
		for hi := range hs {
			jobs <- job{si, hi}
		}
	}
	close(jobs)
	wg.Wait()
	return scores, first
}

func score(h *replay.History, rules string) (replay.Score, error) {
	cfg, err := h.ConfigWith(rules)
	if err != nil {
		return replay.Score{}, err
	}
	p, err := replay.Play(context.Background(), h, cfg)
	if err != nil {
		return replay.Score{}, fmt.Errorf("%s: %w", h.Name, err)
	}
	return replay.ScoreOf(h, p), nil
}

// writeMatrix writes a line per history: its label and where each rule
// set stopped it.
func writeMatrix(w io.Writer, hs []*replay.History, sets []ruleSet, scores [][]replay.Score) error {
	tw := columns.NewWriter(w, 0)
	head := []string{"history", "label"}
	for _, s := range sets {
		head = append(head, strings.TrimPrefix(s.name, "peer "))
	}
	fmt.Fprintln(tw, strings.Join(head, "\t"))
	for hi, h := range hs {
		row := []string{h.Name, h.Label.String()}
		for si := range sets {
			s := scores[si][hi]
			cell := "never"
			if s.Stop.Loop > 0 {
				cell = fmt.Sprint(s.Stop.Loop)
			}
			switch s.Verdict {
			case replay.VerdictFalseStop:
				cell += "*"
			case replay.VerdictLate:
				cell += "!"
			case replay.VerdictMissed:
				cell = "-"
			}
			row = append(row, cell)
		}
		fmt.Fprintln(tw, strings.Join(row, "\t"))
	}
	return tw.Flush()
}

// writeRecorded plays each history under its own config and writes what
// was decided into its recorded field.
func writeRecorded(hs []*replay.History) error {
	for _, h := range hs {
		p, err := replay.Play(context.Background(), h, nil)
		if err != nil {
			return fmt.Errorf("%s: %w", h.Name, err)
		}
		h.Recorded = p.Outcomes
		b, err := json.MarshalIndent(h, "", "  ")
		if err != nil {
			return err
		}
		if err := os.WriteFile(h.File, append(b, '\n'), 0o644); err != nil {
			return err
		}
	}
	return nil
}
