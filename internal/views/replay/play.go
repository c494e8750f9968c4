package replay

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	example "github.com/autoretry/orchestrator"
	"github.com/autoretry/orchestrator/internal/foundations/config"
	"github.com/autoretry/orchestrator/internal/foundations/procgroup"
	"github.com/autoretry/orchestrator/issuequeue"
	"github.com/autoretry/orchestrator/orchestrator"
	"github.com/autoretry/orchestrator/signature"
	"github.com/autoretry/orchestrator/templates"
)

// Played is what the engine did with a history: what it decided in each
// run, and which loops of the history it ran.
type Played struct {
	Outcomes []Outcome
	Runs     []PlayedRun
}

// PlayedRun is one run as the engine ran it.
type PlayedRun struct {
	Loops []PlayedLoop
	// Wait marks a stop that only waits (a rate limit, a pause): the run
	// says when to try again.
	Wait bool
}

// PlayedLoop is a loop of the history the engine ran: Index counts the
// history's loops from 1 over all runs; 0 marks an estimate, a loop past
// the history's that repeats its last of the kind.
type PlayedLoop struct {
	Index int
	Loop  Loop
}

// SignaturePrefix starts an output whose signature was recorded rather
// than kept: the signature follows it on the first line. Histories made
// from an event log use it.
const SignaturePrefix = "orchestrator-replay-signature: "

// player plays a history's world to the engine.
type player struct {
	h       *History
	cfg     *config.Config
	o       *orchestrator.Orchestrator
	project string
	now     time.Time
	run     int
	tries   map[int]int
	// The history's loops as two streams: each run's regular loop, and
	// the auto-retry loops in order, whichever run the engine asks in.
	regular []*PlayedLoop // by run; nil: the run recorded no loop
	auto    []PlayedLoop
	next    int                // the next auto-retry loop
	chosen  map[int]PlayedLoop // this run's loops, by number
	// estimates counts the loops played past the history's; past
	// maxEstimates the replay ends the run as aborted.
	estimates int
	ids       map[string]string // the history's issue names -> the engine's IDs
	back      map[string]string // and back
	last      map[string]Result // an issue's last verification result
	played    []PlayedLoop      // this run's
}

// Play runs the engine on h under cfg (nil: the history's own config) in a
// temporary directory it removes, and returns what it decided.
func Play(ctx context.Context, h *History, cfg *config.Config) (*Played, error) {
	project, err := os.MkdirTemp("", "orchestrator-replay-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(project)
	return PlayIn(ctx, h, cfg, project)
}

// PlayIn is Play in the empty directory project, which it leaves with the
// state directory .orchestrator the engine wrote.
func PlayIn(ctx context.Context, h *History, cfg *config.Config, project string) (*Played, error) {
	if cfg == nil {
		var err error
		if cfg, err = h.ConfigWith(""); err != nil {
			return nil, err
		}
	}
	if cfg.Loop.Command == "" {
		c := *cfg
		c.Loop.Command = "the loop"
		cfg = &c
	}
	rules, err := signature.Compile(signature.Options{Rules: cfg.Signature.Normalize, Extra: cfg.Signature.ExtraPatterns})
	if err != nil {
		return nil, err
	}
	state := filepath.Join(project, ".orchestrator")
	if err := os.Mkdir(state, 0o755); err != nil {
		return nil, err
	}
	st, err := fs.ReadFile(example.FS, example.Root+"/session_state.md")
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(state, "session_state.md"), st, 0o644); err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(state, "issue_queue.md"), []byte(h.Queue), 0o644); err != nil {
		return nil, err
	}
	p := &player{h: h, cfg: cfg, project: project, ids: map[string]string{}, back: map[string]string{}, last: map[string]Result{}}
	p.o = &orchestrator.Orchestrator{Dir: state, Config: cfg, Templates: &templates.Set{Dir: filepath.Join(state, "templates")},
		Stdout: io.Discard, Stderr: io.Discard, Now: func() time.Time { return p.now }, Invocation: "orchestrator", Command: "run",
		NewSignature: recordedSignatures(rules)}
	q := issuequeue.ParseQueue("issue_queue.md", []byte(h.Queue))
	if err := q.Err(); err != nil {
		return nil, fmt.Errorf("%s: queue: %w", h.Name, err)
	}
	for _, is := range q.Issues {
		p.ids[is.ID], p.back[is.ID] = is.ID, is.ID
	}
	index := 0
	for _, r := range h.Runs {
		var regular *PlayedLoop
		for j, l := range r.Loops {
			index++
			if j == 0 {
				regular = &PlayedLoop{Index: index, Loop: l}
			} else {
				p.auto = append(p.auto, PlayedLoop{Index: index, Loop: l})
			}
		}
		p.regular = append(p.regular, regular)
	}
	every := time.Duration(h.Every)
	if every == 0 {
		every = 10 * time.Minute
	}
	played := &Played{}
	at := h.Start
	// The recorded runs, then, while auto-retry loops of the history are
	// left, more runs as cron would start them: until one stops for good
	// or, bounded, waits too long.
	extra := 0
	for i := 0; i < len(h.Runs) || p.next < len(p.auto) && extra < 2*len(p.auto)+24; i++ {
		switch {
		case i < len(h.Runs) && !h.Runs[i].At.IsZero():
			at = h.Runs[i].At
		case i > 0:
			at = at.Add(every)
		}
		if i >= len(h.Runs) {
			extra++
		}
		if at.After(p.now) {
			p.now = at
		}
		p.run, p.tries, p.chosen, p.played = i, map[int]int{}, map[int]PlayedLoop{}, nil
		before := p.next
		r := &orchestrator.Runner{O: p.o, Terminal: io.Discard, Stderr: io.Discard, Environ: []string{}, Pid: 1000 + i,
			Exec: p.exec, Sleep: p.sleep, Rand: func() float64 { return 0.5 }}
		_, err := r.Run(ctx)
		pr := PlayedRun{Loops: p.played}
		var se *orchestrator.StopError
		switch {
		case errors.As(err, &se):
			pr.Wait = se.Wait
		case err != nil:
			return nil, fmt.Errorf("run %d: %w", i+1, err)
		}
		if i >= len(h.Runs) && p.next == before && !pr.Wait {
			break // the engine takes up no more of them: nothing to tell of this run
		}
		played.Runs = append(played.Runs, pr)
	}
	outs, err := Outcomes(state)
	if err != nil {
		return nil, err
	}
	for i := range outs {
		for j := range outs[i].Halts {
			if id, ok := p.back[outs[i].Halts[j].Issue]; ok {
				outs[i].Halts[j].Issue = id
			}
		}
	}
	played.Outcomes = outs[:min(len(outs), len(played.Runs))]
	return played, nil
}

// ConfigWith is the configuration to play the history under: its own
// config text over the defaults, then the file rules (a rule set to judge
// it by), if not "". With rules "" it is the configuration the history was
// recorded with.
func (h *History) ConfigWith(rules string) (*config.Config, error) {
	layers := []config.Layer{{File: h.Name + " (its config)", Data: []byte(h.Config)}}
	if rules != "" {
		data, err := os.ReadFile(rules)
		if err != nil {
			return nil, err
		}
		layers = append(layers, config.Layer{File: rules, Data: data})
	}
	cfg, err := config.Parse(layers...)
	if err != nil {
		return nil, fmt.Errorf("history %s: config: %w", h.Name, err)
	}
	return cfg, nil
}

func (p *player) sleep(ctx context.Context, d time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	p.now = p.now.Add(d)
	return nil
}

func envOf(spec procgroup.Spec, name string) string {
	for _, kv := range slices.Backward(spec.Env) {
		if v, ok := strings.CutPrefix(kv, name+"="); ok {
			return v
		}
	}
	return ""
}

// loop is the history's loop the engine's loop n of the current run
// plays: the run's regular loop, or the next auto-retry loop; past the
// history's, its last of the kind again (an estimate).
func (p *player) loop(n int, kind string) PlayedLoop {
	if l, ok := p.chosen[n]; ok {
		return l
	}
	var l PlayedLoop
	switch {
	case kind == orchestrator.KindRegular:
		for r := min(p.run, len(p.regular)-1); r >= 0; r-- {
			if reg := p.regular[r]; reg != nil {
				if l = *reg; r != p.run {
					l.Index = 0 // none recorded in this run: the last before it, again
				}
				break
			}
		}
	case p.next < len(p.auto):
		l = p.auto[p.next]
		p.next++
	case len(p.auto) > 0:
		l = PlayedLoop{Loop: p.auto[len(p.auto)-1].Loop}
	}
	if l.Index == 0 {
		p.estimates++
	}
	p.chosen[n] = l
	p.played = append(p.played, l)
	return l
}

// exec plays one execution of the loop command or of a verification check.
func (p *player) exec(ctx context.Context, spec procgroup.Spec) (procgroup.Result, error) {
	if spec.Command != p.cfg.Loop.Command {
		return p.verify(spec)
	}
	n, err := strconv.Atoi(envOf(spec, "ORCHESTRATOR_LOOP"))
	if err != nil {
		return procgroup.Result{}, fmt.Errorf("replay: ORCHESTRATOR_LOOP: %w", err)
	}
	if _, ok := p.chosen[n]; !ok && p.estimates >= maxEstimates(p.h) {
		// As far as an estimate goes: the run ends there, aborted.
		return procgroup.Result{ExitCode: -1, Canceled: true}, nil
	}
	l := p.loop(n, envOf(spec, "ORCHESTRATOR_LOOP_KIND")).Loop
	p.tries[n]++
	execs := append(slices.Clip(l.Tries), l.Exec)
	try := min(p.tries[n], len(execs))
	x := execs[try-1]
	d := minutes(x.Minutes)
	res := procgroup.Result{ExitCode: x.Exit}
	if idle := p.cfg.Loop.IdleTimeout; x.Silent > 0 && idle > 0 && minutes(x.Silent) >= idle {
		d, res.Idle, res.ExitCode = max(d-minutes(x.Silent), 0)+idle, true, -1
	} else if to := p.cfg.Loop.Timeout; to > 0 && d >= to {
		d, res.TimedOut, res.ExitCode = to, true, -1
	}
	p.now = p.now.Add(d)
	if x.Cost > 0 {
		if path := envOf(spec, "ORCHESTRATOR_COST_FILE"); path != "" {
			if err := os.WriteFile(path, []byte(strconv.FormatFloat(x.Cost, 'f', -1, 64)+"\n"), 0o644); err != nil {
				return res, err
			}
		}
	}
	if try == len(execs) && !res.Idle && !res.TimedOut {
		if err := p.world(ctx, l); err != nil {
			return res, err
		}
	}
	if err := writeLog(spec, x.Output); err != nil {
		return res, err
	}
	if spec.Output != nil && x.Output != "" {
		// Line by line, as a process prints: the engine reads an agent's
		// spend as each line completes.
		for line := range strings.Lines(x.Output) {
			if _, err := io.WriteString(spec.Output, line); err != nil {
				return res, err
			}
		}
	}
	res.OutputBytes = int64(len(x.Output))
	res.Tail = []byte(x.Output[max(0, len(x.Output)-spec.Tail):])
	if why := spec.Stop.Reason(); why != "" {
		res.StoppedBy, res.ExitCode = why, -1
	}
	return res, ctx.Err()
}

// world does what the loop did besides printing: a person's actions, the
// workspace, and its QA step's filings.
func (p *player) world(ctx context.Context, l Loop) error {
	o := p.o
	for _, a := range l.Person {
		verb, id, _ := personAction(a)
		var err error
		switch verb {
		case "sentinel":
			err = os.WriteFile(filepath.Join(o.Dir, "no_auto_retry"), nil, 0o644)
		case "unsentinel":
			if err = os.Remove(filepath.Join(o.Dir, "no_auto_retry")); errors.Is(err, fs.ErrNotExist) {
				err = nil
			}
		case "retry":
			_ = o.Retry(ctx, p.id(id)) // refused, as the person's command would be, when it does not apply
		case "skip":
			_ = o.Skip(ctx, p.id(id), "skipped by a person")
		case "resolve":
			_ = o.Resolve(ctx, p.id(id))
		}
		if err != nil {
			return fmt.Errorf("person %q: %w", a, err)
		}
	}
	if l.Workspace != "" {
		if err := os.WriteFile(filepath.Join(p.project, "workspace.txt"), []byte(l.Workspace+"\n"), 0o644); err != nil {
			return err
		}
	}
	for _, n := range l.Add {
		prio := n.Priority
		if prio == "" {
			prio = "critical"
		}
		var details orchestrator.Output
		if n.Details != "" {
			details.Tail = []byte(n.Details)
		}
		id, err := o.Add(ctx, orchestrator.NewIssue{Summary: n.Summary, Priority: prio, AutoRetry: true, Blocking: true, MaxRetries: -1,
			Verify: n.Verify, Details: details, FromLoop: true})
		var fe *orchestrator.FilingLimitError
		switch {
		case errors.As(err, &fe):
			continue // refused, as the loop's "add" would be
		case err != nil:
			return fmt.Errorf("add %q: %w", n.Summary, err)
		}
		name := n.ID
		if name == "" {
			name = id
		}
		p.ids[name], p.back[id] = id, name
	}
	// In the order of the engine's IDs: a history made from a log names
	// them so, and the order counts for failures across issues.
	var fails [][2]string
	for name := range l.Fail {
		if id, ok := p.ids[name]; ok { // else filed by a loop this replay did not run
			fails = append(fails, [2]string{id, name})
		}
	}
	slices.SortFunc(fails, func(a, b [2]string) int { return strings.Compare(a[0], b[0]) })
	for _, f := range fails {
		id, name := f[0], f[1]
		if _, err := o.Fail(ctx, id, p.output(l, name, l.Fail[name]), orchestrator.FailVerification); err != nil {
			return fmt.Errorf("fail %s: %w", name, err)
		}
	}
	for _, name := range l.Resolve {
		if id, ok := p.ids[name]; ok {
			if err := o.ResolveFromLoop(ctx, id); err != nil {
				return fmt.Errorf("resolve %s: %w", name, err)
			}
		}
	}
	for name, r := range l.Verify {
		if id, ok := p.ids[name]; ok {
			r.Output = string(p.output(l, name, r.Output))
			p.last[id] = r
		}
	}
	return nil
}

// id is the engine's ID of an issue the history names.
func (p *player) id(name string) string {
	if id, ok := p.ids[name]; ok {
		return id
	}
	return name
}

// output is an issue's failing output in loop l, with its recorded
// signature, if the loop gives one, in front.
func (p *player) output(l Loop, name, out string) []byte {
	if sig := l.Signatures[name]; sig != "" {
		return []byte(SignaturePrefix + sig + "\n" + out)
	}
	return []byte(out)
}

// verify plays a verification check of the issue in $ORCHESTRATOR_ISSUES:
// what the history said of it last.
func (p *player) verify(spec procgroup.Spec) (procgroup.Result, error) {
	r, ok := p.last[envOf(spec, "ORCHESTRATOR_ISSUES")]
	if !ok {
		return procgroup.Result{ExitCode: 1}, writeLog(spec, "")
	}
	if spec.Output != nil {
		io.WriteString(spec.Output, r.Output)
	}
	return procgroup.Result{ExitCode: r.Exit, Tail: []byte(r.Output), OutputBytes: int64(len(r.Output))}, writeLog(spec, r.Output)
}

// writeLog keeps an execution's output where the engine keeps it.
func writeLog(spec procgroup.Spec, out string) error {
	if spec.LogPath == "" {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(spec.LogPath), 0o755); err != nil {
		return err
	}
	return os.WriteFile(spec.LogPath, []byte(out), 0o644)
}

// maxEstimates bounds the loops a replay plays past a history's: as many
// as it holds, and at least a run's worth.
func maxEstimates(h *History) int { return max(h.Loops(), 16) }

func minutes(m float64) time.Duration {
	if m <= 0 {
		m = 1
	}
	return time.Duration(m * float64(time.Minute)).Round(time.Millisecond)
}

// recordedSignatures wraps the engine's signatures: an output that starts
// with SignaturePrefix has the signature written after it.
func recordedSignatures(rules *signature.Rules) func() (orchestrator.SignatureWriter, error) {
	return func() (orchestrator.SignatureWriter, error) {
		return &recorded{next: rules.NewDigest()}, nil
	}
}

type recorded struct {
	next orchestrator.SignatureWriter
	head []byte
}

func (r *recorded) Write(b []byte) (int, error) {
	if len(r.head) < len(SignaturePrefix)+64 {
		r.head = append(r.head, b[:min(len(b), len(SignaturePrefix)+64-len(r.head))]...)
	}
	return r.next.Write(b)
}

func (r *recorded) Sum() string {
	if sig, ok := bytes.CutPrefix(r.head, []byte(SignaturePrefix)); ok && len(sig) == 64 {
		return string(sig)
	}
	return r.next.Sum()
}
