package agentout

import (
	"bytes"
	"strings"

	"github.com/autoretry/orchestrator/internal/foundations/lazyre"
)

// maxLimitText bounds the text of a limit kept to read the lines that finish it.
const maxLimitText = 8 << 10

// readText reads a line that is not structured output. Wordings are matched
// on the last few lines joined, so a message a terminal wrapped still matches.
func (r *Reader) readText(line []byte) {
	if len(line) == 0 {
		return
	}
	if r.readAiderUsage(line) {
		return
	}
	keep := line
	if len(keep) > windowLine {
		keep = keep[:windowLine]
	}
	// The window is a ring of reused buffers: the oldest line's buffer takes
	// the new line.
	var slot []byte
	if len(r.window) == windowLen {
		slot = r.window[0]
		copy(r.window, r.window[1:])
		r.window = r.window[:windowLen-1]
	}
	r.window = append(r.window, append(slot[:0], keep...))
	r.sinceLimit++
	// A keyword a terminal split lies across the previous line's end and this
	// line, joined as they were (mid-word) or, for a keyword of two words,
	// with the blank the wrap took; anything else is in this line alone.
	r.probe = r.probe[:0]
	hit := false
	if n := len(r.window); n > 1 {
		prev := r.window[n-2]
		r.probe = appendLower(r.probe, prev[max(0, len(prev)-15):])
		if len(prev) > 0 && prev[len(prev)-1] != ' ' {
			mark := len(r.probe)
			r.probe = append(r.probe, ' ')
			r.probe = appendLower(r.probe, keep[:min(len(keep), 15)])
			hit = hasPhrase(r.probe)
			r.probe = r.probe[:mark]
		}
	}
	r.probe = appendLower(r.probe, keep)
	// Lines just after a limit are read too: they may finish its wording (a
	// zone, the minutes) that a terminal wrapped onto them.
	hit = hit || hasAny(r.probe)
	if !hit && r.sinceLimit > 3 {
		return
	}
	s := string(bytes.Join(r.window, nil))
	r.hintAgent(strings.ToLower(s))
	if r.classify(s) {
		if hit {
			r.sinceLimit = 0
		}
		r.limitText = append(r.limitText[:0], s...)
		return
	}
	// The lines after a limit finish its wording even once its start has
	// left the window: they are read joined to the text that stated it.
	if l := r.rep.Limit; l != nil && r.sinceLimit <= 3 && len(r.limitText) > 0 && len(r.limitText)+len(keep) <= maxLimitText {
		r.limitText = append(r.limitText, keep...)
		if until := r.until(string(r.limitText)); !until.IsZero() {
			l.Until = until
		}
	}
}

var prefilterWords = [][]byte{
	[]byte("limit"), []byte("429"), []byte("529"), []byte("overload"), []byte("exhaust"),
	[]byte("quota"), []byte("too many"), []byte("disabled"), []byte("authentication"),
	[]byte("api key"), []byte("try again"), []byte("retry"), []byte("exceeded"),
	[]byte("extra usage"), []byte("out of"), []byte("reset"),
}

// prefilter is the cheap test a message passes before any wording is tried;
// lines joined after a wrap may have lost the blank of a two-word keyword.
func prefilter(b []byte) bool {
	lower := appendLower(nil, b)
	if hasAny(lower) {
		return true
	}
	for _, w := range prefilterPhrases {
		if bytes.Contains(lower, bytes.ReplaceAll(w, []byte(" "), nil)) {
			return true
		}
	}
	return false
}

func hasAny(lower []byte) bool {
	for _, w := range prefilterWords {
		if bytes.Contains(lower, w) {
			return true
		}
	}
	return false
}

// prefilterPhrases are the keywords of two words, whose blank a wrap may take.
var prefilterPhrases = [][]byte{
	[]byte("too many"), []byte("api key"), []byte("try again"), []byte("extra usage"), []byte("out of"),
}

// hasPhrase is hasAny for the keywords of two words.
func hasPhrase(lower []byte) bool {
	for _, w := range prefilterPhrases {
		if bytes.Contains(lower, w) {
			return true
		}
	}
	return false
}

// appendLower appends b with ASCII letters lowered.
func appendLower(dst, b []byte) []byte {
	for _, c := range b {
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		dst = append(dst, c)
	}
	return dst
}

func (r *Reader) hintAgent(ls string) {
	has := func(words ...string) bool {
		for _, w := range words {
			if strings.Contains(ls, w) {
				return true
			}
		}
		return false
	}
	switch {
	case has("litellm.", "aider v"):
		r.setAgent(KindAider, false)
	case has("claude", "limit reached ·", "hit your limit ·", "hit your session limit", "· resets"):
		r.setAgent(KindClaude, false)
	case has("hit your usage limit", "codex"):
		r.setAgent(KindCodex, false)
	case has("resource_exhausted", "gemini", "access resets at", "usage limit reached for", "exhausted your", "✕ [api error"):
		r.setAgent(KindGemini, false)
	}
}

var re429 = lazyre.New(`\b429\b`)

// classify reads the error and limit a message states; it reports whether the
// message stated one.
func (r *Reader) classify(msg string) bool {
	if msg == "" || !prefilter([]byte(msg)) {
		return false
	}
	ls := strings.ToLower(strings.ReplaceAll(msg, "’", "'"))
	sq := squeeze(ls)
	has := func(words ...string) bool {
		for _, w := range words {
			if strings.Contains(sq, w) {
				return true
			}
		}
		return false
	}
	// Blanks and underscores are dropped before the words are matched:
	// "usage_limit_reached" is "usage limit reached".
	switch {
	case has("usageallocationhasbeendisabled", "organizationhasbeendisabled", "disabledbyorgadmin",
		"authenticationerror", "invalidapikey", "invalidx-api-key"):
		r.setError(ErrAuth)
		return true
	case !has("notyourusagelimit") && has("usagelimitreached", "usagelimithasbeenreached", "usagelimitwillreset",
		"you'vehityour", "youhavehityour", "reachedyourusagelimit", "limitreached·",
		"you'reoutof", "youareoutof", "freeusageexceeded", "exhaustedyourcapacity", "exhaustedyourdailyquota") ||
		has("limitreached") && has("reset"):
		r.setError(ErrUsageLimit)
		r.setLimit(r.until(msg), collapse(msg))
		return true
	case has("ratelimit", "resourceexhausted", "resourcehasbeenexhausted",
		"quotaexceeded", "exceededyourcurrentquota", "toomanyrequests") || re429().MatchString(ls):
		r.setError(ErrRateLimit)
		r.setLimit(r.until(msg), collapse(msg))
		return true
	case has("overloaded"):
		r.setError(ErrOverloaded)
		return true
	}
	return false
}

func squeeze(s string) string {
	return strings.Map(func(c rune) rune {
		if c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '_' {
			return -1
		}
		return c
	}, s)
}

func collapse(s string) string {
	return strings.Join(strings.Fields(s), " ")
}
