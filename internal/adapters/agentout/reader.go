package agentout

import (
	"bytes"
	"time"
)

const (
	maxLine    = 1 << 20 // a line is kept whole up to this size
	lineTail   = 64 << 10
	maxDoc     = 4 << 20 // a pretty-printed JSON document is kept up to this size
	windowLen  = 16      // lines joined for wrapped wordings: a message wrapped at 20 columns
	windowLine = 2 << 10 // bytes of each line kept for the window
)

// Reader reads an agent's output as it streams. The zero value is not usable;
// use NewReader. A Reader is not safe for concurrent use: give an exec.Cmd the
// same Reader as Stdout and Stderr, and the command writes to it from one
// goroutine at a time.
type Reader struct {
	kind Kind
	at   time.Time
	loc  *time.Location

	line     []byte // the current line, up to maxLine
	tail     []byte // the last bytes of an overlong line
	overlong bool

	doc    []byte // a pretty-printed JSON document being collected
	inDoc  bool
	window [][]byte
	probe  []byte // scratch for the keyword test

	rep          Report
	agentSure    bool // Agent came from a structured event or the caller
	errRank      int
	resultTokens bool // a session total of tokens was read
	resultCost   bool // a session total of cost was read
	sumCost      float64
	hasSumCost   bool
	lastMsgID    string
	sinceLimit   int    // lines read since a limit was stated
	limitText    []byte // the text that stated the limit, and the lines after it
	aider        []byte // an Aider report whose lines may continue
	aiderLines   int
}

// NewReader returns a Reader for the output of an agent of the given kind
// (KindAuto detects it). at is the instant the output was produced; loc is the
// zone for times the output states without one (nil means UTC).
func NewReader(kind Kind, at time.Time, loc *time.Location) *Reader {
	if loc == nil {
		loc = time.UTC
	}
	r := &Reader{kind: kind, at: at, loc: loc, sinceLimit: windowLen + 1}
	if kind != KindAuto && kind != "" {
		r.rep.Agent = kind
		r.agentSure = true
	}
	return r
}

// Write reads p as the next bytes of the output. It never fails.
func (r *Reader) Write(p []byte) (int, error) {
	n := len(p)
	if r.kind == KindNone {
		return n, nil
	}
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			r.appendLine(p)
			break
		}
		r.appendLine(p[:i])
		r.endLine()
		p = p[i+1:]
	}
	return n, nil
}

func (r *Reader) appendLine(p []byte) {
	if r.overlong {
		r.appendTail(p)
		return
	}
	if room := maxLine - len(r.line); len(p) > room {
		r.line = append(r.line, p[:room]...)
		r.overlong = true
		r.appendTail(p[room:])
		return
	}
	r.line = append(r.line, p...)
}

// appendTail keeps the last lineTail bytes of an overlong line, in a buffer
// of at most twice that.
func (r *Reader) appendTail(p []byte) {
	if len(p) >= lineTail {
		r.tail = append(r.tail[:0], p[len(p)-lineTail:]...)
		return
	}
	if len(r.tail)+len(p) > 2*lineTail {
		keep := lineTail - len(p)
		copy(r.tail, r.tail[len(r.tail)-keep:])
		r.tail = r.tail[:keep]
	}
	r.tail = append(r.tail, p...)
}

func (r *Reader) endLine() {
	line := r.line
	if r.overlong {
		if len(r.tail) > lineTail {
			r.tail = r.tail[len(r.tail)-lineTail:] // the same bytes however the line arrived
		}
		r.readOverlong(line, r.tail)
	} else {
		r.readLine(line)
	}
	r.line = r.line[:0]
	r.tail = r.tail[:0]
	r.overlong = false
	if cap(r.line) > maxLine+1 {
		r.line = nil
	}
}

// Report returns what the output said so far. A last line without a newline
// is read as if it ended; call Report when the output has ended.
func (r *Reader) Report() Report {
	if len(r.line) > 0 || r.overlong {
		r.endLine()
	}
	if r.inDoc {
		r.abandonDoc()
	}
	if len(r.aider) > 0 {
		r.flushAider()
	}
	return r.Sofar()
}

// Sofar returns what the complete lines read so far said, leaving a
// pending last line or document to the next Write: for a caller that
// watches the output while it streams. Report is Sofar once the output has
// ended.
func (r *Reader) Sofar() Report {
	rep := r.rep
	if !r.resultCost && r.hasSumCost {
		c := r.sumCost
		rep.CostUSD = &c
	}
	if rep.Agent == "" {
		rep.Agent = KindNone
	}
	return rep
}

// readLine reads one complete line of output.
func (r *Reader) readLine(raw []byte) {
	line := cleanLine(raw)
	if r.inDoc {
		if len(r.doc)+len(raw)+1 > maxDoc {
			r.abandonDoc()
		} else {
			r.doc = append(r.doc, raw...)
			r.doc = append(r.doc, '\n')
			if end := bytes.TrimRight(raw, " \t\r"); bytes.Equal(end, []byte("}")) || bytes.Equal(end, []byte("]")) {
				if r.readJSON(r.doc) {
					r.doc = r.doc[:0]
					r.inDoc = false
				} else {
					r.abandonDoc()
				}
			}
			return
		}
	}
	if len(raw) > 0 && (bytes.Equal(line, []byte("{")) || bytes.Equal(line, []byte("["))) && (raw[0] == '{' || raw[0] == '[') {
		r.inDoc = true
		r.doc = append(r.doc[:0], raw...)
		r.doc = append(r.doc, '\n')
		return
	}
	if len(line) > 0 && (line[0] == '{' || line[0] == '[') && r.readJSON(line) {
		r.window = r.window[:0]
		return
	}
	r.readText(line)
}

// abandonDoc reads the collected lines of a document that did not parse as text.
func (r *Reader) abandonDoc() {
	doc := r.doc
	r.inDoc = false
	r.doc = nil
	for len(doc) > 0 {
		i := bytes.IndexByte(doc, '\n')
		if i < 0 {
			i = len(doc)
		}
		r.readText(cleanLine(doc[:i]))
		if i == len(doc) {
			break
		}
		doc = doc[i+1:]
	}
}

// readOverlong reads a line longer than maxLine from its head and tail: a
// structured result keeps its totals after the long text it carries.
func (r *Reader) readOverlong(head, tail []byte) {
	r.scanResultKeys(tail)
	r.readText(cleanLine(head[len(head)-min(len(head), windowLine):]))
	r.readText(cleanLine(tail))
}

// cleanLine drops terminal escapes, carriage returns, box borders and
// surrounding blanks.
func cleanLine(b []byte) []byte {
	if bytes.IndexByte(b, 0x1b) >= 0 || bytes.IndexByte(b, '\r') >= 0 {
		out := make([]byte, 0, len(b))
		for i := 0; i < len(b); i++ {
			c := b[i]
			if c == '\r' {
				continue
			}
			if c == 0x1b && i+1 < len(b) && b[i+1] == '[' {
				j := i + 2
				for j < len(b) && (b[j] < 0x40 || b[j] > 0x7e) {
					j++
				}
				i = j
				continue
			}
			out = append(out, c)
		}
		b = out
	}
	b = bytes.TrimSpace(b)
	for _, border := range []string{"│", "┃", "║", "|"} {
		if bytes.HasPrefix(b, []byte(border)) && bytes.HasSuffix(b, []byte(border)) && len(b) > 2*len(border) {
			b = bytes.TrimSpace(b[len(border) : len(b)-len(border)])
		}
	}
	return b
}

func (r *Reader) setAgent(k Kind, sure bool) {
	if r.agentSure {
		return
	}
	if sure {
		r.rep.Agent, r.agentSure = k, true
		return
	}
	if r.rep.Agent == "" {
		r.rep.Agent = k
	}
}

var errRanks = map[string]int{
	ErrExecution: 1, ErrOverloaded: 2, ErrMaxTurns: 3, ErrBudget: 3,
	ErrRateLimit: 4, ErrUsageLimit: 5, ErrAuth: 6,
}

// setError records an error; a more telling kind replaces a less telling one.
func (r *Reader) setError(kind string) {
	r.rep.Error = true
	if rank := errRanks[kind]; rank >= r.errRank {
		r.rep.ErrorKind, r.errRank = kind, rank
	}
}

// setLimit records a limit; a stated instant replaces an unstated one, and a
// later statement replaces an earlier one.
func (r *Reader) setLimit(until time.Time, text string) {
	if len(text) > 300 {
		text = text[:300]
	}
	r.limitText = r.limitText[:0]
	if r.rep.Limit != nil && until.IsZero() && !r.rep.Limit.Until.IsZero() {
		return
	}
	r.rep.Limit = &Limit{Until: until, Text: text}
}
