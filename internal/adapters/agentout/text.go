package agentout

import (
	"bytes"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"
	_ "time/tzdata" // limit messages name IANA zones; hosts without a zone database still resolve them

	"github.com/autoretry/orchestrator/internal/foundations/lazyre"
)

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
	// line; anything else is in this line alone.
	r.probe = r.probe[:0]
	if n := len(r.window); n > 1 {
		prev := r.window[n-2]
		r.probe = appendLower(r.probe, prev[max(0, len(prev)-15):])
	}
	r.probe = appendLower(r.probe, keep)
	// Lines just after a limit are read too: they may finish its wording (a
	// zone, the minutes) that a terminal wrapped onto them.
	hit := hasAny(r.probe)
	if !hit && r.sinceLimit > 3 {
		return
	}
	s := string(bytes.Join(r.window, nil))
	r.hintAgent(strings.ToLower(s))
	if r.classify(s) {
		if hit {
			r.sinceLimit = 0
		}
		return
	}
	// A reset stated a few lines after a limit that stated none belongs to it.
	if l := r.rep.Limit; l != nil && l.Until.IsZero() && r.sinceLimit <= 3 {
		if until := r.until(s); !until.IsZero() {
			l.Until = until
		}
	}
}

var prefilterWords = [][]byte{
	[]byte("limit"), []byte("429"), []byte("529"), []byte("overload"), []byte("exhaust"),
	[]byte("quota"), []byte("too many"), []byte("disabled"), []byte("authentication"),
	[]byte("api key"), []byte("try again"), []byte("retry"), []byte("exceeded"),
}

// prefilter is the cheap test a message passes before any pattern is tried.
func prefilter(b []byte) bool {
	return hasAny(appendLower(nil, b))
}

func hasAny(lower []byte) bool {
	for _, w := range prefilterWords {
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
	switch {
	case strings.Contains(ls, "litellm.") || strings.Contains(ls, "aider v"):
		r.setAgent(KindAider, false)
	case strings.Contains(ls, "claude") || strings.Contains(ls, "limit reached ·") || strings.Contains(ls, "hit your limit ·") || strings.Contains(ls, "hit your session limit"):
		r.setAgent(KindClaude, false)
	case strings.Contains(ls, "hit your usage limit") || strings.Contains(ls, "chatgpt.com/codex"):
		r.setAgent(KindCodex, false)
	case strings.Contains(ls, "resource_exhausted") || strings.Contains(ls, "gemini"):
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
	switch {
	case has("usageallocationhasbeendisabled", "organizationhasbeendisabled", "disabledbyorgadmin",
		"authentication_error", "invalidapikey", "invalidx-api-key"):
		r.setError(ErrAuth)
		return true
	case !has("notyourusagelimit") && has("usagelimitreached", "you'vehityour", "limitreached·",
		"outofextrausage", "freeusageexceeded", "exhaustedyourcapacity", "usagelimitwillreset") ||
		has("limitreached") && has("reset"):
		r.setError(ErrUsageLimit)
		r.setLimit(r.until(msg), collapse(msg))
		return true
	case has("rate_limit", "ratelimit", "resource_exhausted", "resourceexhausted", "resourcehasbeenexhausted",
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
		if c == ' ' || c == '\t' || c == '\n' || c == '\r' {
			return -1
		}
		return c
	}, s)
}

func collapse(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

var (
	reEpoch    = lazyre.New(`(?i)limit reached\s*\|\s*(\d{9,11})`)
	reDateAt   = lazyre.New(`(?i)try again at\s*([a-z]{3})[a-z]*\.?\s*(\d{1,2})(?:st|nd|rd|th)?,?\s*(\d{4}),?\s*(\d{1,2}):(\d{2})\s*([ap]m)`)
	reDateDe   = lazyre.New(`(?i)try again at\s*(\d{1,2}) de ([a-zç]{3})[a-zç]*\.? de (\d{4}),?\s*(\d{1,2}):(\d{2})`)
	reResetsAt = lazyre.New(`(?i)resets?\s*(?:at\s*)?(?:([a-z]{3})[a-z]*\.?\s*(\d{1,2})(?:st|nd|rd|th)?,?\s*)?(\d{1,2})(?::(\d{2}))?\s*([ap]m)(?:\s*\(([a-z_]+(?:/[a-z_+-]+)*)\)|\s+(utc|gmt(?:[+-]\d{1,2})?)\b)?`)
	reClockAt  = lazyre.New(`(?i)try again at\s*(\d{1,2}):(\d{2})\s*([ap]m)?`)
	reAfter    = lazyre.New(`(?i)(?:try again|retrying|retry|reset)\s*(?:in|after)\s*(\d[\w .,]{0,60})`)
)

var months = map[string]time.Month{
	"jan": 1, "feb": 2, "mar": 3, "apr": 4, "may": 5, "jun": 6, "jul": 7, "aug": 8, "sep": 9, "oct": 10, "nov": 11, "dec": 12,
	// Portuguese and Spanish abbreviations that differ
	"fev": 2, "abr": 4, "mai": 5, "ago": 8, "set": 9, "out": 10, "dez": 12, "ene": 1, "dic": 12,
}

// untilPattern is one way of stating when a limit lifts; it runs only where
// one of its words is present, as most lines that mention a limit state no time.
type untilPattern struct {
	words []string
	re    func() *regexp.Regexp
	read  func(r *Reader, m []string) (time.Time, bool)
}

var untilPatterns = []untilPattern{
	{[]string{"|"}, reEpoch, func(r *Reader, m []string) (time.Time, bool) {
		n, err := strconv.ParseInt(m[1], 10, 64)
		return time.Unix(n, 0).UTC(), err == nil
	}},
	{[]string{"try again at"}, reDateAt, func(r *Reader, m []string) (time.Time, bool) {
		mon, ok := months[strings.ToLower(m[1])]
		day, _ := strconv.Atoi(m[2])
		year, _ := strconv.Atoi(m[3])
		h, min := clock(m[4], m[5], m[6])
		return time.Date(year, mon, day, h, min, 0, 0, r.loc), ok
	}},
	{[]string{"try again at"}, reDateDe, func(r *Reader, m []string) (time.Time, bool) {
		mon, ok := months[strings.ToLower(m[2])]
		day, _ := strconv.Atoi(m[1])
		year, _ := strconv.Atoi(m[3])
		h, min := clock(m[4], m[5], "")
		return time.Date(year, mon, day, h, min, 0, 0, r.loc), ok
	}},
	{[]string{"reset"}, reResetsAt, func(r *Reader, m []string) (time.Time, bool) {
		h, min := clock(m[3], m[4], m[5])
		zone := r.zone(m[6], m[7])
		if m[1] == "" {
			return r.next(h, min, zone), true
		}
		mon, ok := months[strings.ToLower(m[1])]
		if !ok {
			return r.next(h, min, zone), true
		}
		day, _ := strconv.Atoi(m[2])
		at := r.at.In(zone)
		t := time.Date(at.Year(), mon, day, h, min, 0, 0, zone)
		if t.Before(at.AddDate(0, 0, -1)) {
			t = t.AddDate(1, 0, 0)
		}
		return t, true
	}},
	{[]string{"try again at"}, reClockAt, func(r *Reader, m []string) (time.Time, bool) {
		h, min := clock(m[1], m[2], m[3])
		return r.next(h, min, r.loc), true
	}},
	{[]string{"try again", "retry", "reset"}, reAfter, func(r *Reader, m []string) (time.Time, bool) {
		d, ok := parseDelay(m[1])
		return r.at.Add(d), ok
	}},
}

// until finds the instant a limit message says the limit lifts; zero if it
// states none. The first pattern that reads a time wins.
func (r *Reader) until(msg string) time.Time {
	s := collapse(msg)
	ls := strings.ToLower(s)
	for _, p := range untilPatterns {
		present := false
		for _, w := range p.words {
			present = present || strings.Contains(ls, w)
		}
		if !present {
			continue
		}
		if m := lastMatch(p.re(), s); m != nil {
			if t, ok := p.read(r, m); ok {
				return t
			}
		}
	}
	return time.Time{}
}

func lastMatch(re *regexp.Regexp, s string) []string {
	all := re.FindAllStringSubmatch(s, -1)
	if len(all) == 0 {
		return nil
	}
	return all[len(all)-1]
}

func clock(hs, ms, ampm string) (int, int) {
	h, _ := strconv.Atoi(hs)
	m, _ := strconv.Atoi(ms)
	switch strings.ToLower(ampm) {
	case "am":
		if h == 12 {
			h = 0
		}
	case "pm":
		if h < 12 {
			h += 12
		}
	}
	return h, m
}

// next is the first h:m in zone at or after the output's instant.
func (r *Reader) next(h, m int, zone *time.Location) time.Time {
	at := r.at.In(zone)
	t := time.Date(at.Year(), at.Month(), at.Day(), h, m, 0, 0, zone)
	if t.Before(at.Truncate(time.Minute)) {
		t = time.Date(at.Year(), at.Month(), at.Day()+1, h, m, 0, 0, zone)
	}
	return t
}

var (
	zoneMu    sync.Mutex
	zoneCache = map[string]*time.Location{}
)

// zone resolves the zone a message names: an IANA name in parentheses, or
// UTC/GMT with an offset; else the Reader's location.
func (r *Reader) zone(iana, abbr string) *time.Location {
	if abbr != "" {
		a := strings.ToUpper(abbr)
		if len(a) > 3 {
			if n, err := strconv.Atoi(a[3:]); err == nil {
				return time.FixedZone(a, n*3600)
			}
		}
		return time.UTC
	}
	if iana == "" {
		return r.loc
	}
	zoneMu.Lock()
	defer zoneMu.Unlock()
	if z, ok := zoneCache[iana]; ok {
		return z
	}
	z, err := time.LoadLocation(iana)
	if err != nil {
		z = r.loc
	} else if len(zoneCache) < 256 {
		zoneCache[iana] = z
	}
	return z
}

// parseDelay reads "5 days 22 hours 11 minutes", "39.84s", "12h22m45s".
func parseDelay(s string) (time.Duration, bool) {
	var total time.Duration
	found := false
	for {
		s = strings.TrimLeft(s, " ,")
		s = strings.TrimPrefix(s, "and ")
		i := 0
		for i < len(s) && (s[i] >= '0' && s[i] <= '9' || s[i] == '.') {
			i++
		}
		if i == 0 {
			break
		}
		n, err := strconv.ParseFloat(s[:i], 64)
		if err != nil {
			break
		}
		s = strings.TrimLeft(s[i:], " ")
		j := 0
		for j < len(s) && (s[j] >= 'a' && s[j] <= 'z' || s[j] >= 'A' && s[j] <= 'Z') {
			j++
		}
		var unit time.Duration
		switch strings.ToLower(s[:j]) {
		case "d", "day", "days":
			unit = 24 * time.Hour
		case "h", "hr", "hrs", "hour", "hours":
			unit = time.Hour
		case "m", "min", "mins", "minute", "minutes":
			unit = time.Minute
		case "s", "sec", "secs", "second", "seconds":
			unit = time.Second
		case "ms":
			unit = time.Millisecond
		default:
			return total, found
		}
		total += time.Duration(n * float64(unit))
		found = true
		s = s[j:]
	}
	return total, found
}

var reAider = lazyre.New(`^>?\s*Tokens: ([\d.,]+k?) sent(?:, ([\d.,]+k?) cache write)?(?:, ([\d.,]+k?) cache (?:hit|read))?, ([\d.,]+k?) received\.(?:\s*Cost: \$([\d.]+) message(?:, \$([\d.]+) session)?)?`)

// readAiderUsage reads Aider's per-message report: tokens are summed over the
// messages; the session cost, when printed, is the cost.
func (r *Reader) readAiderUsage(line []byte) bool {
	if !bytes.Contains(line, []byte("Tokens: ")) || !bytes.Contains(line, []byte(" received")) {
		return false
	}
	m := reAider().FindSubmatch(line)
	if m == nil {
		return false
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
	return true
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
