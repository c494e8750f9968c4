package agentout

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"time"
)

// event is the union of the JSON shapes the agents print; each reader below
// uses the fields of its own shape.
type event struct {
	Type     string          `json:"type"`
	Subtype  string          `json:"subtype"`
	IsError  *bool           `json:"is_error"`
	Total    *float64        `json:"total_cost_usd"`
	CostUSD  *float64        `json:"cost_usd"`
	Usage    json.RawMessage `json:"usage"`
	Message  json.RawMessage `json:"message"`
	Result   json.RawMessage `json:"result"`
	Error    json.RawMessage `json:"error"`
	Status   string          `json:"status"`
	Stats    json.RawMessage `json:"stats"`
	Response *string         `json:"response"`
	Part     *opencodePart   `json:"part"`
	Session  string          `json:"sessionID"`
	APIError *int            `json:"api_error_status"`
	RateInfo *rateLimitInfo  `json:"rate_limit_info"`
	Severity string          `json:"severity"`
}

type rateLimitInfo struct {
	Status      string   `json:"status"`
	ResetsAt    *int64   `json:"resetsAt"`
	Type        string   `json:"rateLimitType"`
	Utilization *float64 `json:"utilization"`
}

type opencodePart struct {
	Type   string `json:"type"`
	Tokens *struct {
		Input  *int64 `json:"input"`
		Output *int64 `json:"output"`
		Cache  *struct {
			Read  *int64 `json:"read"`
			Write *int64 `json:"write"`
		} `json:"cache"`
	} `json:"tokens"`
	Cost *float64 `json:"cost"`
}

// readJSON reads a JSON value (an event, a result, or an array of them); it
// reports false when b is not JSON of a shape it knows.
func (r *Reader) readJSON(b []byte) bool {
	b = bytes.TrimSpace(b)
	if len(b) == 0 {
		return false
	}
	if b[0] == '[' {
		var items []json.RawMessage
		if json.Unmarshal(b, &items) != nil {
			return false
		}
		known := false
		for _, it := range items {
			if r.readEvent(it) {
				known = true
			}
		}
		return known
	}
	return r.readEvent(b)
}

func (r *Reader) readEvent(b []byte) bool {
	var e event
	if json.Unmarshal(b, &e) != nil {
		return false
	}
	switch {
	case e.Type == "result" && (e.Subtype != "" || e.Total != nil || e.IsError != nil):
		r.claudeResult(&e)
	case e.Type == "assistant" || e.Type == "user" || e.Type == "system" && e.Subtype != "":
		r.setAgent(KindClaude, true)
		if e.Type == "assistant" {
			r.claudeAssistant(&e)
		}
	case e.Type == "rate_limit_event":
		r.claudeRateLimit(&e)
	case e.Type == "thread.started" || e.Type == "turn.started" || e.Type == "turn.completed" ||
		e.Type == "turn.failed" || strings.HasPrefix(e.Type, "item."):
		r.codexEvent(&e)
	case e.Type == "error" && e.Session == "" && e.Severity == "" && len(e.Message) > 0 && e.Message[0] == '"' && !r.agentIs(KindGemini):
		r.setAgent(KindCodex, false)
		r.failed(jsonString(e.Message), ErrExecution)
	case e.Session != "" && (strings.HasPrefix(e.Type, "step_") || e.Type == "text" || e.Type == "tool_use" || e.Type == "error"):
		r.opencodeEvent(&e)
	case e.Type == "init" || e.Type == "message" || e.Type == "tool_use" || e.Type == "tool_result" || e.Type == "error":
		r.setAgent(KindGemini, true)
	case e.Type == "result":
		r.geminiStreamResult(&e)
	case e.Type == "" && (e.Response != nil || len(e.Stats) > 0 || len(e.Error) > 0):
		r.geminiJSON(&e)
	default:
		return false
	}
	return true
}

func (r *Reader) agentIs(k Kind) bool { return r.rep.Agent == k }

// failed records a fatal error stated in msg: the wordings decide the kind
// (a limit, an overload, refused access); otherwise it is fallback.
func (r *Reader) failed(msg, fallback string) {
	r.rep.Error = true
	if !r.classify(msg) && fallback != "" {
		r.setError(fallback)
	}
}

type claudeUsage struct {
	Input      *int64 `json:"input_tokens"`
	Output     *int64 `json:"output_tokens"`
	CacheRead  *int64 `json:"cache_read_input_tokens"`
	CacheWrite *int64 `json:"cache_creation_input_tokens"`
	Cached     *int64 `json:"cached_input_tokens"` // Codex
}

func (u claudeUsage) tokens() Tokens {
	var t Tokens
	if u.Input != nil {
		t.Input, t.HasInput = *u.Input, true
	}
	if u.Output != nil {
		t.Output, t.HasOutput = *u.Output, true
	}
	if u.CacheRead != nil {
		t.CacheRead, t.HasCacheRead = *u.CacheRead, true
	}
	if u.Cached != nil {
		t.CacheRead, t.HasCacheRead = *u.Cached, true
	}
	if u.CacheWrite != nil {
		t.CacheWrite, t.HasCacheWrite = *u.CacheWrite, true
	}
	return t
}

func parseUsage(raw json.RawMessage) (Tokens, bool) {
	if len(raw) == 0 || raw[0] != '{' {
		return Tokens{}, false
	}
	var u claudeUsage
	if json.Unmarshal(raw, &u) != nil {
		return Tokens{}, false
	}
	t := u.tokens()
	return t, t.Known()
}

// claudeResult reads Claude Code's result: the session's totals, which
// replace whatever the messages said.
func (r *Reader) claudeResult(e *event) {
	r.setAgent(KindClaude, true)
	cost := e.Total
	if cost == nil {
		cost = e.CostUSD
	}
	if cost != nil {
		c := *cost
		r.rep.CostUSD, r.resultCost = &c, true
	}
	if t, ok := parseUsage(e.Usage); ok {
		r.rep.Tokens, r.resultTokens = t, true
	}
	isErr := e.IsError != nil && *e.IsError || strings.HasPrefix(e.Subtype, "error")
	if !isErr {
		return
	}
	r.rep.Error = true
	if e.APIError != nil {
		switch s := *e.APIError; {
		case s == 429:
			r.setError(ErrRateLimit)
		case s == 529:
			r.setError(ErrOverloaded)
		case s == 401 || s == 403:
			r.setError(ErrAuth)
		}
	}
	text := jsonString(e.Result)
	switch e.Subtype {
	case "error_max_turns":
		r.setError(ErrMaxTurns)
	case "error_max_budget_usd":
		r.setError(ErrBudget)
	}
	if !r.classify(text) && r.rep.ErrorKind == "" {
		r.setError(ErrExecution)
	}
}

// claudeAssistant sums message usage until a result states the total; a
// message printed once per content block carries the same id and counts once.
func (r *Reader) claudeAssistant(e *event) {
	var m struct {
		ID      string          `json:"id"`
		Model   string          `json:"model"`
		Usage   json.RawMessage `json:"usage"`
		Content []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"content"`
	}
	if len(e.Message) == 0 || e.Message[0] != '{' || json.Unmarshal(e.Message, &m) != nil {
		return
	}
	if m.Model == "<synthetic>" {
		// Claude Code's own notice (a limit, an API error), not the model's words.
		for _, c := range m.Content {
			r.classify(c.Text)
		}
	}
	if r.resultTokens || (m.ID != "" && m.ID == r.lastMsgID) {
		return
	}
	r.lastMsgID = m.ID
	if t, ok := parseUsage(m.Usage); ok {
		r.rep.Tokens.add(t)
	}
}

// claudeRateLimit reads Claude Code's report of its usage window; a rejected
// request is a usage limit that lifts at resetsAt.
func (r *Reader) claudeRateLimit(e *event) {
	r.setAgent(KindClaude, true)
	info := e.RateInfo
	if info == nil {
		return
	}
	w := &WindowUsage{Name: info.Type, Status: info.Status}
	if info.Utilization != nil {
		u := *info.Utilization
		w.Used = &u
	}
	if info.ResetsAt != nil && *info.ResetsAt > 0 {
		w.ResetsAt = time.Unix(*info.ResetsAt, 0).UTC()
	}
	r.rep.Window = w
	if i := slices.IndexFunc(r.rep.Windows, func(o WindowUsage) bool { return o.Name == w.Name }); i >= 0 {
		r.rep.Windows[i] = *w
	} else {
		r.rep.Windows = append(r.rep.Windows, *w)
	}
	if info.Status == "rejected" {
		r.setError(ErrUsageLimit)
		r.setLimit(w.ResetsAt, "rate_limit_event: rejected ("+info.Type+")")
	}
}

func (r *Reader) codexEvent(e *event) {
	r.setAgent(KindCodex, true)
	switch e.Type {
	case "turn.completed":
		if t, ok := parseUsage(e.Usage); ok {
			r.rep.Tokens.add(t)
		}
	case "turn.failed":
		var fe struct {
			Message string `json:"message"`
		}
		_ = json.Unmarshal(e.Error, &fe)
		r.failed(fe.Message, ErrExecution)
	}
}

func (r *Reader) opencodeEvent(e *event) {
	r.setAgent(KindOpencode, true)
	if e.Type == "error" {
		r.failed(string(e.Error), ErrExecution)
		return
	}
	p := e.Part
	if e.Type != "step_finish" || p == nil {
		return
	}
	if p.Cost != nil {
		r.sumCost += *p.Cost
		r.hasSumCost = true
	}
	if tk := p.Tokens; tk != nil {
		var t Tokens
		if tk.Input != nil {
			t.Input, t.HasInput = *tk.Input, true
		}
		if tk.Output != nil {
			t.Output, t.HasOutput = *tk.Output, true
		}
		if tk.Cache != nil && tk.Cache.Read != nil {
			t.CacheRead, t.HasCacheRead = *tk.Cache.Read, true
		}
		if tk.Cache != nil && tk.Cache.Write != nil {
			t.CacheWrite, t.HasCacheWrite = *tk.Cache.Write, true
		}
		r.rep.Tokens.add(t)
	}
}

// geminiStreamResult reads the result event of Gemini CLI's stream-json.
func (r *Reader) geminiStreamResult(e *event) {
	r.setAgent(KindGemini, true)
	var s struct {
		Input  *int64 `json:"input_tokens"`
		Output *int64 `json:"output_tokens"`
		Cached *int64 `json:"cached"`
	}
	if len(e.Stats) > 0 && json.Unmarshal(e.Stats, &s) == nil {
		t := claudeUsage{Input: s.Input, Output: s.Output, Cached: s.Cached}.tokens()
		if t.Known() {
			r.rep.Tokens, r.resultTokens = t, true
		}
	}
	if e.Status == "error" || len(e.Error) > 0 {
		r.geminiError(e.Error)
	}
}

// geminiJSON reads the single object of Gemini CLI's --output-format json.
func (r *Reader) geminiJSON(e *event) {
	r.setAgent(KindGemini, true)
	var s struct {
		Models map[string]struct {
			Tokens struct {
				Prompt     *int64 `json:"prompt"`
				Candidates *int64 `json:"candidates"`
				Cached     *int64 `json:"cached"`
			} `json:"tokens"`
		} `json:"models"`
	}
	if len(e.Stats) > 0 && json.Unmarshal(e.Stats, &s) == nil && len(s.Models) > 0 {
		var t Tokens
		for _, m := range s.Models {
			var one Tokens
			if m.Tokens.Prompt != nil {
				one.Input, one.HasInput = *m.Tokens.Prompt, true
			}
			if m.Tokens.Candidates != nil {
				one.Output, one.HasOutput = *m.Tokens.Candidates, true
			}
			if m.Tokens.Cached != nil {
				one.CacheRead, one.HasCacheRead = *m.Tokens.Cached, true
			}
			t.add(one)
		}
		r.rep.Tokens, r.resultTokens = t, true
	}
	if len(e.Error) > 0 && string(e.Error) != "null" {
		r.geminiError(e.Error)
	}
}

func (r *Reader) geminiError(raw json.RawMessage) {
	var ge struct {
		Type    string          `json:"type"`
		Message string          `json:"message"`
		Code    json.RawMessage `json:"code"`
	}
	_ = json.Unmarshal(raw, &ge)
	r.rep.Error = true
	code := strings.Trim(string(ge.Code), `"`)
	switch {
	case strings.Contains(ge.Type, "TurnLimit") || strings.Contains(ge.Type, "MaxSessionTurns"):
		r.setError(ErrMaxTurns)
	case strings.Contains(ge.Type, "Authentication"):
		r.setError(ErrAuth)
	case code == "429":
		r.setError(ErrRateLimit)
		r.classify(ge.Message)
		if r.rep.Limit == nil {
			r.setLimit(time.Time{}, ge.Message)
		}
	default:
		if !r.classify(ge.Message) {
			r.setError(ErrExecution)
		}
	}
}

// scanResultKeys reads the totals at the end of an overlong Claude result line.
func (r *Reader) scanResultKeys(tail []byte) {
	for _, key := range []string{`"total_cost_usd":`, `"cost_usd":`} {
		if i := bytes.LastIndex(tail, []byte(key)); i >= 0 {
			var f float64
			if json.NewDecoder(bytes.NewReader(tail[i+len(key):])).Decode(&f) == nil {
				r.setAgent(KindClaude, false)
				r.rep.CostUSD, r.resultCost = &f, true
				break
			}
		}
	}
	if i := bytes.LastIndex(tail, []byte(`"usage":`)); i >= 0 {
		var raw json.RawMessage
		if json.NewDecoder(bytes.NewReader(tail[i+len(`"usage":`):])).Decode(&raw) == nil {
			if t, ok := parseUsage(raw); ok {
				r.rep.Tokens, r.resultTokens = t, true
			}
		}
	}
}

func jsonString(raw json.RawMessage) string {
	var s string
	if len(raw) > 0 && raw[0] == '"' && json.Unmarshal(raw, &s) == nil {
		return s
	}
	return string(raw)
}
