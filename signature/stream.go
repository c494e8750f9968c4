package signature

import "bytes"

const (
	// maxLine is the longest line the rules look at: a line longer than
	// that (counted after dropping what comes before its last carriage
	// return) is cut to its first maxLine bytes.
	maxLine = 64 << 10

	// outSize is the size of the normalized-output buffer; the output is
	// handed on once it holds flushAt bytes, at a line boundary.
	outSize = 128 << 10
	flushAt = 64 << 10
)

// stream splits output into lines, whatever the pieces it arrives in, and
// hands the normalized text on in pieces of about flushAt bytes. Complete lines inside a piece are
// normalized where they lie; only the unfinished line at the end of a piece
// is copied, and at most maxLine bytes of it are kept.
type stream struct {
	sc   *scanner
	out  []byte
	emit func([]byte) error // takes the normalized text, in pieces
	// handoff, if set instead of emit, takes a piece of normalized text
	// for good and returns an empty buffer to go on with.
	handoff func([]byte) []byte
	err     error // the first error of emit

	// The unfinished line: the bytes after its last carriage return, and
	// whether carriage returns followed them (they are dropped if the line
	// ends there, and start the line afresh if text follows).
	carry     []byte
	pendingCR bool

	blank int // blank lines not written yet: dropped if nothing follows

	lb   lineBufs
	held []byte // a line's output while blank lines go before it

	rep *report // the rules V2's test reports; nil for V1

	pipe *pipeline // if set, the lines go to it (see pipeline.go)
}

// lineBufs are the buffers a line is prepared in for the line rules.
type lineBufs struct {
	sc    *scanner
	clean []byte    // the line without escape sequences
	paths [2][]byte // buffers of workspacePaths
	nbsp  []byte    // a line whose no-break spaces became spaces
	seen  lineCache // lines normalized lately (see linecache.go)
}

func (r *Rules) newStream(emit func([]byte) error) *stream {
	st := &stream{sc: &r.sc, emit: emit, out: make([]byte, 0, outSize)}
	st.lb.sc = &r.sc
	if r.sc.v2 {
		st.rep = &report{v3: r.sc.v3, root: r.sc.root, slowTests: r.slowTests}
	}
	return st
}

func (st *stream) write(p []byte) {
	for len(p) > 0 {
		if st.pipe != nil && len(st.carry) == 0 && !st.pendingCR {
			// The complete lines go to the pipeline in one piece.
			if last := bytes.LastIndexByte(p, '\n'); last >= 0 {
				st.pipe.addLines(p[:last])
				p = p[last+1:]
			}
			if len(p) > 0 {
				st.appendCarry(p)
			}
			return
		}
		nl := bytes.IndexByte(p, '\n')
		if nl < 0 {
			st.appendCarry(p)
			return
		}
		if len(st.carry) == 0 && !st.pendingCR {
			st.take(p[:nl])
		} else {
			st.appendCarry(p[:nl])
			st.take(st.carry)
			st.carry = st.carry[:0]
			st.pendingCR = false
		}
		p = p[nl+1:]
		if st.pipe == nil && len(st.out) >= flushAt {
			st.flush()
		}
	}
}

// appendCarry adds b, which holds no newline, to the unfinished line.
func (st *stream) appendCarry(b []byte) {
	trailingCR := len(b) > 0 && b[len(b)-1] == '\r'
	body := b
	for len(body) > 0 && body[len(body)-1] == '\r' {
		body = body[:len(body)-1]
	}
	if len(body) > 0 {
		if k := bytes.LastIndexByte(body, '\r'); k >= 0 {
			st.carry = st.carry[:0]
			body = body[k+1:]
		} else if st.pendingCR {
			st.carry = st.carry[:0]
		}
		st.pendingCR = false
		if room := maxLine - len(st.carry); room < len(body) {
			body = body[:room]
		}
		if st.carry == nil {
			st.carry = make([]byte, 0, min(maxLine, max(len(body), 1024)))
		}
		st.carry = append(st.carry, body...)
	}
	if trailingCR {
		st.pendingCR = true
	}
}

// take takes one line, given without its newline: to the pipeline if
// there is one, else to line.
func (st *stream) take(b []byte) {
	if st.pipe != nil {
		st.pipe.add(b)
		return
	}
	st.line(b)
}

// line normalizes one line, given without its newline. Most lines go
// straight to the scanner; one that holds a carriage return or an escape
// sequence, is too long, or meets extra patterns is prepared first.
func (st *stream) line(b []byte) {
	if st.rep != nil {
		st.line2(b)
		return
	}
	start := len(st.out)
	ok := false
	if len(b) <= maxLine && len(st.sc.extra) == 0 {
		st.out, ok = st.sc.appendLine(st.out, b, false)
	}
	if !ok {
		st.out, _ = st.sc.appendLine(st.out, st.lb.prepare(b), false)
	}
	if len(st.out) == start {
		st.blank++
		return
	}
	if st.blank > 0 {
		st.held = append(st.held[:0], st.out[start:]...)
		st.out = st.out[:start]
		for st.blank > 0 {
			n := min(st.blank, len(newlines))
			st.out = append(st.out, newlines[:n]...)
			st.blank -= n
			if len(st.out) >= flushAt {
				st.flush()
			}
		}
		st.out = append(st.out, st.held...)
	}
	st.out = append(st.out, '\n')
}

// prepare applies the rules that come before the scanner: the text after
// the last carriage return, the length cap, no escape sequences, the extra
// patterns.
func (lb *lineBufs) prepare(b []byte) []byte {
	if bytes.IndexByte(b, '\r') >= 0 {
		for len(b) > 0 && b[len(b)-1] == '\r' {
			b = b[:len(b)-1]
		}
		if k := bytes.LastIndexByte(b, '\r'); k >= 0 {
			b = b[k+1:]
		}
	}
	if len(b) > maxLine {
		b = b[:maxLine]
	}
	if bytes.IndexByte(b, 0x1b) >= 0 {
		lb.clean = StripANSI(lb.clean[:0], b)
		b = lb.clean
	}
	if len(lb.sc.extra) > 0 && !isBlank(b) {
		b = lb.sc.redact(b)
	}
	return b
}

var newlines = bytes.Repeat([]byte{'\n'}, 4096)

// isBlank reports whether b holds only spaces and tabs: such a line
// normalizes to nothing, and patterns do not see it.
func isBlank(b []byte) bool {
	for _, c := range b {
		if c != ' ' && c != '\t' {
			return false
		}
	}
	return true
}

// close ends the output: an unfinished line counts as a line, blank lines
// at the end are dropped.
func (st *stream) close() {
	if len(st.carry) > 0 || st.pendingCR {
		st.take(st.carry)
		st.carry = st.carry[:0]
		st.pendingCR = false
	}
	if st.pipe != nil {
		st.pipe.wait()
		st.pipe = nil
	}
	st.blank = 0
	if st.rep != nil {
		st.blocks()
	}
	st.flush()
}

func (st *stream) flush() {
	if len(st.out) == 0 {
		return
	}
	if st.handoff != nil {
		st.out = st.handoff(st.out)
		return
	}
	if st.err == nil {
		st.err = st.emit(st.out)
	}
	st.out = st.out[:0]
}

// line2 normalizes one line under the rules V2: the workspace paths, the
// line rules, then the test report rules, which keep the line in order,
// put it into a failure block, or drop it. Blank lines only end blocks.
func (st *stream) line2(b []byte) {
	if len(b) > 12 && b[0] == '{' && b[1] == '"' && !st.rep.inJSON {
		if out, test, ok := testJSON(st.rep.json[:0], b); ok {
			// go test -json: the test's output, line by line, is what
			// the report rules read; the other events repeat it.
			st.rep.inJSON = true
			st.rep.json = out
			// The test's name as the line rules make it, as its
			// "--- FAIL: name" line will have it.
			if name, ok := st.sc.appendLine(st.rep.jsonName[:0], test, false); ok {
				st.rep.jsonName, test = name, name
			}
			for rest := st.rep.json; len(rest) > 0; {
				line := rest
				if k := bytes.IndexByte(rest, '\n'); k >= 0 {
					line, rest = rest[:k], rest[k+1:]
				} else {
					rest = nil
				}
				st.rep.jsonTest(test, line)
				st.line2(line)
			}
			st.rep.inJSON = false
			return
		}
	}
	if len(b) <= maxLine && len(st.sc.extra) == 0 && st.rep.quick(b) {
		return
	}
	st.normalizeAndReport(b)
}

// lineQuick is line2 for a line that quickAct, asked ahead, says quick's
// way takes with act, at indentation indent, if it is open; the line is no
// go test -json event.
func (st *stream) lineQuick(b []byte, act, indent int) {
	if st.rep.quickNow() {
		st.rep.act(act, 0, b[indent:], b, indent)
		return
	}
	st.normalizeAndReport(b)
}

// normalizeAndReport applies the line rules to b, into st.out, and hands
// the line to the report rules.
func (st *stream) normalizeAndReport(b []byte) {
	start := len(st.out)
	var raw []byte
	st.out, raw = st.lb.appendLine2(st.out, b)
	st.report(start, raw)
}

// appendLine2 appends the normalization of line b under the rules V2 to
// out, and returns the line as the report rules see it before the line
// rules: b, or b prepared (see prepare) with its workspace paths and
// no-break spaces replaced, in lb's buffers. It reads nothing but b, so
// that it can run ahead of the report rules (see pipeline).
func (lb *lineBufs) appendLine2(out, b []byte) ([]byte, []byte) {
	if len(b) > cacheMaxLine || !lb.seen.use() {
		return lb.normalizeLine2(out, b)
	}
	slot, hit := lb.seen.lookup(b)
	if hit {
		raw := b
		if !slot.same {
			raw = slot.raw
		}
		return append(out, slot.norm...), raw
	}
	start := len(out)
	out, raw := lb.normalizeLine2(out, b)
	slot.store(b, out[start:], raw)
	return out, raw
}

// normalizeLine2 is appendLine2 without the table of lines seen lately.
func (lb *lineBufs) normalizeLine2(out, b []byte) ([]byte, []byte) {
	ok, tried := false, false
	var raw []byte
	if len(b) <= maxLine && len(lb.sc.extra) == 0 {
		raw = b
		out, ok = lb.sc.appendLine(out, raw, true)
		tried = true
	}
	if !ok {
		raw = lb.prepare(b)
		// A line that prepare leaves as it is failed for its workspace
		// paths or no-break spaces: the scanner would fail again.
		if !tried || len(raw) != len(b) || &raw[0] != &b[0] {
			out, ok = lb.sc.appendLine(out, raw, true)
		}
		if !ok {
			raw = lb.sc.workspacePaths(&lb.paths, raw)
			raw = lb.blanks(raw)
			out, _ = lb.sc.appendLine(out, raw, false)
		}
	}
	return out, raw
}

// report hands the line normalized into st.out[start:], whose text before
// the line rules is raw, to the report rules, which keep it in order, put
// it into a failure block or drop it.
func (st *stream) report(start int, raw []byte) {
	keep, t := st.rep.reportLine(st.out[start:], raw, indentOf(raw))
	if !keep {
		st.out = st.out[:start]
		return
	}
	if len(t) != len(st.out)-start || &t[0] != &st.out[start] {
		st.out = append(st.out[:start], t...) // the report rules changed it
	}
	st.keptLine()
}

// reportNormalized is report for a line normalized elsewhere, into t,
// which the report rules may change; it is copied to st.out only if they
// keep it in order.
func (st *stream) reportNormalized(t, raw []byte) {
	keep, t := st.rep.reportLine(t[:len(t):len(t)], raw, indentOf(raw))
	if keep {
		st.out = append(st.out, t...)
		st.keptLine()
	}
}

// keptLine ends a line the report rules keep in order.
func (st *stream) keptLine() {
	st.out = append(st.out, '\n')
	st.rep.inOrder = true
}

// indentOf returns the width of the blanks a line starts with, a tab
// counting four.
func indentOf(raw []byte) int {
	indent := 0
	for _, c := range raw {
		if c == ' ' {
			indent++
		} else if c == '\t' {
			indent += 4
		} else {
			break
		}
	}
	return indent
}

// blocks writes the failure blocks of the rules V2, sorted, after the
// lines kept in order, a blank line before each but a first.
func (st *stream) blocks() {
	for i, b := range st.rep.finish() {
		if i > 0 || st.rep.inOrder {
			st.out = append(st.out, '\n')
		}
		st.out = append(st.out, b...)
		if len(st.out) >= flushAt {
			st.flush()
		}
	}
}
