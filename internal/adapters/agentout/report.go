package agentout

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// Kind names an agent CLI whose output a Reader knows how to read.
type Kind string

const (
	KindAuto     Kind = "auto"     // detect the agent from its output
	KindClaude   Kind = "claude"   // Claude Code
	KindCodex    Kind = "codex"    // OpenAI Codex CLI
	KindGemini   Kind = "gemini"   // Gemini CLI
	KindAider    Kind = "aider"    // Aider
	KindOpencode Kind = "opencode" // opencode
	KindNone     Kind = "none"     // do not read the output
)

// ParseKind accepts a Kind's name, case-insensitively; the empty string is auto.
func ParseKind(s string) (Kind, error) {
	switch k := Kind(strings.ToLower(strings.TrimSpace(s))); k {
	case "":
		return KindAuto, nil
	case KindAuto, KindClaude, KindCodex, KindGemini, KindAider, KindOpencode, KindNone:
		return k, nil
	}
	return "", fmt.Errorf("unknown agent %q (want auto, claude, codex, gemini, aider, opencode or none)", s)
}

// Error kinds a Report can carry.
const (
	ErrMaxTurns   = "max_turns"   // the agent stopped at its turn limit
	ErrBudget     = "budget"      // the agent stopped at its own spending cap
	ErrExecution  = "execution"   // the agent failed for another reason
	ErrRateLimit  = "rate_limit"  // rate limited (429, RESOURCE_EXHAUSTED, quota)
	ErrUsageLimit = "usage_limit" // a plan's session, daily or weekly limit
	ErrOverloaded = "overloaded"  // the provider was overloaded (529); not a limit
	ErrAuth       = "auth"        // credentials or access refused; permanent
)

// Tokens holds token counts as the agent stated them; a Has flag is false
// where the agent stated nothing for that count.
type Tokens struct {
	Input, Output, CacheRead, CacheWrite             int64
	HasInput, HasOutput, HasCacheRead, HasCacheWrite bool
}

// Known reports whether the agent stated any count.
func (t Tokens) Known() bool {
	return t.HasInput || t.HasOutput || t.HasCacheRead || t.HasCacheWrite
}

func (t *Tokens) add(o Tokens) {
	if o.HasInput {
		t.Input, t.HasInput = t.Input+o.Input, true
	}
	if o.HasOutput {
		t.Output, t.HasOutput = t.Output+o.Output, true
	}
	if o.HasCacheRead {
		t.CacheRead, t.HasCacheRead = t.CacheRead+o.CacheRead, true
	}
	if o.HasCacheWrite {
		t.CacheWrite, t.HasCacheWrite = t.CacheWrite+o.CacheWrite, true
	}
}

// Limit is a rate or usage limit the agent reported.
type Limit struct {
	Until time.Time // when the limit lifts; zero if the output does not say
	Text  string    // the words (or event) that stated the limit
}

// WindowUsage is an agent's own report of its usage window.
type WindowUsage struct {
	Name     string    // e.g. "five_hour", "seven_day"
	Used     *float64  // share used, 0..1; nil if not stated
	ResetsAt time.Time // zero if not stated
	Status   string    // e.g. "allowed", "allowed_warning", "rejected"
}

// Report is what a Reader learned from an agent's output.
type Report struct {
	Agent     Kind
	CostUSD   *float64
	Tokens    Tokens
	Error     bool
	ErrorKind string // one of the Err constants; "" when Error is false or unknown
	Limit     *Limit
	Window    *WindowUsage // the last window reported
	// Windows holds the last report of each window by name ("five_hour",
	// "seven_day"), in the order they were first reported.
	Windows []WindowUsage
}

// MarshalJSON writes the report as
//
//	{"agent": K, "cost_usd": N|null,
//	 "tokens": {"input": N|null, "output": N|null, "cache_read": N|null, "cache_write": N|null},
//	 "error": bool, "error_kind": S|null, "limit": {"until": RFC3339|null, "text": S}|null}
func (r Report) MarshalJSON() ([]byte, error) {
	type tokens struct {
		Input      *int64 `json:"input"`
		Output     *int64 `json:"output"`
		CacheRead  *int64 `json:"cache_read"`
		CacheWrite *int64 `json:"cache_write"`
	}
	type limit struct {
		Until *string `json:"until"`
		Text  string  `json:"text"`
	}
	out := struct {
		Agent     Kind     `json:"agent"`
		CostUSD   *float64 `json:"cost_usd"`
		Tokens    tokens   `json:"tokens"`
		Error     bool     `json:"error"`
		ErrorKind *string  `json:"error_kind"`
		Limit     *limit   `json:"limit"`
	}{Agent: r.Agent, CostUSD: r.CostUSD, Error: r.Error}
	if out.Agent == "" {
		out.Agent = KindNone
	}
	t := r.Tokens
	if t.HasInput {
		out.Tokens.Input = &t.Input
	}
	if t.HasOutput {
		out.Tokens.Output = &t.Output
	}
	if t.HasCacheRead {
		out.Tokens.CacheRead = &t.CacheRead
	}
	if t.HasCacheWrite {
		out.Tokens.CacheWrite = &t.CacheWrite
	}
	if r.ErrorKind != "" {
		k := r.ErrorKind
		out.ErrorKind = &k
	}
	if r.Limit != nil {
		out.Limit = &limit{Text: r.Limit.Text}
		if !r.Limit.Until.IsZero() {
			s := r.Limit.Until.UTC().Format(time.RFC3339)
			out.Limit.Until = &s
		}
	}
	return json.Marshal(out)
}

// JSON is MarshalJSON without the error, which cannot happen.
func (r Report) JSON() []byte {
	b, _ := r.MarshalJSON()
	return b
}
