package replay

import (
	"slices"
	"time"
)

// Difference is a run the engine decided otherwise than recorded: where it
// stopped, what it halted, and what the loops it would not have run (saved)
// or would have run beyond them (added) spent.
type Difference struct {
	Run      int     `json:"run"`
	RunID    string  `json:"run_id,omitempty"`
	Recorded Outcome `json:"recorded"`
	Replayed Outcome `json:"replayed"`
	Spend
	// Estimated marks loops added past the history's loops of the run:
	// they repeat its last loop.
	Estimated bool `json:"estimated,omitempty"`
}

// Spend is what loops saved and added spent.
type Spend struct {
	LoopsSaved   int     `json:"loops_saved"`
	LoopsAdded   int     `json:"loops_added"`
	MinutesSaved float64 `json:"agent_minutes_saved,omitempty"`
	MinutesAdded float64 `json:"agent_minutes_added,omitempty"`
	TokensSaved  int64   `json:"tokens_saved,omitempty"`
	TokensAdded  int64   `json:"tokens_added,omitempty"`
	CostSaved    float64 `json:"cost_saved,omitempty"`
	CostAdded    float64 `json:"cost_added,omitempty"`
}

// Add counts o's loops and spend in s.
func (s *Spend) Add(o Spend) {
	s.LoopsSaved += o.LoopsSaved
	s.LoopsAdded += o.LoopsAdded
	s.MinutesSaved += o.MinutesSaved
	s.MinutesAdded += o.MinutesAdded
	s.TokensSaved += o.TokensSaved
	s.TokensAdded += o.TokensAdded
	s.CostSaved += o.CostSaved
	s.CostAdded += o.CostAdded
}

// AgentTime writes agent minutes as a duration, for people: "" for none.
func AgentTime(m float64) string {
	if d := time.Duration(m * float64(time.Minute)).Round(time.Second); d > 0 {
		return d.String()
	}
	return ""
}

// Compare returns the runs of h whose replayed outcome differs from the
// recorded one, with what the difference spends.
func Compare(h *History, recorded []Outcome, p *Played) []Difference {
	var diffs []Difference
	for i := range max(len(recorded), len(p.Outcomes)) {
		var rec, rep Outcome
		if i < len(recorded) {
			rec = recorded[i]
		}
		if i < len(p.Outcomes) {
			rep = p.Outcomes[i]
		}
		rec.Run, rep.Run = i+1, i+1
		if same(rec, rep) {
			continue
		}
		d := Difference{Run: i + 1, Recorded: rec, Replayed: rep}
		if i < len(h.Runs) {
			for _, l := range h.Runs[i].Loops[min(rep.Loops, rec.Loops, len(h.Runs[i].Loops)):min(rec.Loops, len(h.Runs[i].Loops))] {
				d.saved(l)
			}
		}
		if i < len(p.Runs) {
			for _, l := range p.Runs[i].Loops[min(rec.Loops, len(p.Runs[i].Loops)):] {
				d.added(l.Loop)
				d.Estimated = d.Estimated || l.Index == 0
			}
		}
		diffs = append(diffs, d)
	}
	return diffs
}

func (s *Spend) saved(l Loop) {
	m, t, c := l.spend()
	s.LoopsSaved, s.MinutesSaved, s.TokensSaved, s.CostSaved = s.LoopsSaved+1, s.MinutesSaved+m, s.TokensSaved+t, s.CostSaved+c
}

func (s *Spend) added(l Loop) {
	m, t, c := l.spend()
	s.LoopsAdded, s.MinutesAdded, s.TokensAdded, s.CostAdded = s.LoopsAdded+1, s.MinutesAdded+m, s.TokensAdded+t, s.CostAdded+c
}

func same(a, b Outcome) bool {
	return a.Loops == b.Loops && a.Code == b.Code && slices.Equal(a.Halts, b.Halts)
}

// spend is what a loop's executions spent: agent minutes, tokens, cost.
func (l Loop) spend() (m float64, tokens int64, cost float64) {
	for _, x := range append(slices.Clip(l.Tries), l.Exec) {
		m += minutes(x.Minutes).Minutes()
		tokens += x.Tokens
		cost += x.Cost
	}
	return m, tokens, cost
}
