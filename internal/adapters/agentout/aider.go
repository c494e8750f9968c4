package agentout

import (
	"bytes"
	"strconv"
	"strings"

	"github.com/autoretry/orchestrator/internal/foundations/lazyre"
)

// Aider's report after each message, as it prints it:
//
//	Tokens: 12k sent, 1.2k cache hit, 1.4k received. Cost: $0.04 message, $0.79 session.
//
// A terminal may wrap it anywhere, and Aider itself puts the cost on a line
// of its own at times, so the report is read from its lines joined; blanks a
// wrap dropped are optional.
var reAider = lazyre.New(`^Tokens:\s*([\d.,]+k?)\s*sent(?:,\s*([\d.,]+k?)\s*cache\s*write)?(?:,\s*([\d.,]+k?)\s*cache\s*(?:hit|read))?,\s*([\d.,]+k?)\s*received\.(?:\s*Cost:\s*\$([\d.]+)\s*message(?:,\s*\$([\d.]+)\s*session)?)?`)

const (
	aiderMaxLines = 3       // lines a report is read across
	aiderMaxText  = 4 << 10 // bytes of a report kept
)

// readAiderUsage reads the lines of Aider's report; it reports whether the
// line belonged to one.
func (r *Reader) readAiderUsage(line []byte) bool {
	text := bytes.TrimLeft(bytes.TrimPrefix(line, []byte(">")), " ")
	if len(r.aider) > 0 {
		if r.aiderLines < aiderMaxLines && aiderContinues(r.aider, text) {
			r.aider = append(r.aider, text[:min(len(text), aiderMaxText-len(r.aider))]...)
			r.aiderLines++
			if bytes.Contains(r.aider, []byte("session")) || len(r.aider) >= aiderMaxText {
				r.flushAider()
			}
			return true
		}
		r.flushAider()
	}
	if !bytes.HasPrefix(text, []byte("Tokens: ")) || !bytes.Contains(text, []byte(" sent")) {
		return false
	}
	r.aider = append(r.aider[:0], text[:min(len(text), aiderMaxText)]...)
	r.aiderLines = 1
	if bytes.Contains(r.aider, []byte("session")) {
		r.flushAider()
	}
	return true
}

// aiderContinues reports whether next is the rest of the report begun in
// pending: the counts not yet ended, a cost begun and not ended, or the
// cost on a line of its own.
func aiderContinues(pending, next []byte) bool {
	i := bytes.LastIndex(pending, []byte("received."))
	if i < 0 {
		return true
	}
	if len(bytes.TrimSpace(pending[i+len("received."):])) > 0 {
		return true
	}
	return bytes.HasPrefix(next, []byte("Cost:"))
}

// flushAider reads the pending report: tokens are summed over the messages;
// the session cost, when printed, is the cost.
func (r *Reader) flushAider() {
	text := r.aider
	r.aider = r.aider[:0]
	r.aiderLines = 0
	m := reAider().FindSubmatch(text)
	if m == nil {
		return
	}
	r.setAgent(KindAider, false)
	var t Tokens
	t.Input, t.HasInput = aiderCount(m[1])
	t.CacheWrite, t.HasCacheWrite = aiderCount(m[2])
	t.CacheRead, t.HasCacheRead = aiderCount(m[3])
	t.Output, t.HasOutput = aiderCount(m[4])
	if !r.resultTokens {
		r.rep.Tokens.add(t)
	}
	if len(m[6]) > 0 {
		if c, err := strconv.ParseFloat(string(m[6]), 64); err == nil {
			r.rep.CostUSD, r.resultCost = &c, true
		}
	} else if len(m[5]) > 0 {
		if c, err := strconv.ParseFloat(string(m[5]), 64); err == nil {
			r.sumCost += c
			r.hasSumCost = true
		}
	}
}

// aiderCount reads Aider's rounded counts as printed: "345", "1.4k", "216k".
func aiderCount(b []byte) (int64, bool) {
	if len(b) == 0 {
		return 0, false
	}
	s := strings.ReplaceAll(string(b), ",", "")
	mult := 1.0
	if strings.HasSuffix(s, "k") {
		mult, s = 1000, strings.TrimSuffix(s, "k")
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return 0, false
	}
	return int64(f*mult + 0.5), true
}
