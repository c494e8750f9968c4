package orchestrator

import (
	"bytes"
	"io"
	"unicode/utf8"
)

// The end of a command's output: what of it is held in memory, however much
// the command printed, and the part of it a person reads.

// TailBuffer keeps the end of what is written to it, at least its last Max
// bytes, and counts the lines and bytes it dropped before them. It holds at
// most 2*Max bytes, so that it copies what it keeps only once per Max bytes
// written. A TailBuffer with Max set is ready to use.
type TailBuffer struct {
	Max                int
	buf                []byte
	cutLines, cutBytes int64
}

func (t *TailBuffer) Write(p []byte) (int, error) {
	n := len(p)
	if len(p) >= t.Max { // only its end can be kept, and nothing before it
		t.drop(t.buf)
		t.buf = t.buf[:0]
		t.drop(p[:len(p)-t.Max])
		p = p[len(p)-t.Max:]
	}
	if len(t.buf)+len(p) > 2*t.Max {
		k := len(t.buf) + len(p) - t.Max // drop so that max remain
		t.drop(t.buf[:k])
		t.buf = append(t.buf[:0], t.buf[k:]...)
	}
	if t.buf == nil {
		t.buf = make([]byte, 0, min(2*t.Max, max(len(p), 4096)))
	}
	t.buf = append(t.buf, p...)
	return n, nil
}

func (t *TailBuffer) drop(b []byte) {
	t.cutBytes += int64(len(b))
	t.cutLines += int64(bytes.Count(b, []byte{'\n'}))
}

// Bytes returns what is kept.
func (t *TailBuffer) Bytes() []byte { return t.buf }

// Last returns the last n bytes written (all that is kept when n is more),
// and whether anything was written before them.
func (t *TailBuffer) Last(n int) ([]byte, bool) {
	if len(t.buf) > n {
		return t.buf[len(t.buf)-n:], true
	}
	return t.buf, t.cutBytes > 0
}

// Output returns what is kept, with what was cut before it.
func (t *TailBuffer) Output() Output {
	return Output{Tail: t.buf, CutLines: t.cutLines, CutBytes: t.cutBytes}
}

// Output is the end of a command's output, as much of it as is held in
// memory (MaxKeptOutput), and how much came before.
type Output struct {
	Tail               []byte
	CutLines, CutBytes int64
}

// ReadOutput reads r to its end, keeping its last MaxKeptOutput bytes;
// everything read is also written to also, if not nil (a signature).
func ReadOutput(r io.Reader, also io.Writer) (Output, error) {
	kept := &TailBuffer{Max: MaxKeptOutput}
	var w io.Writer = kept
	if also != nil {
		w = io.MultiWriter(also, kept)
	}
	_, err := io.Copy(w, r)
	return kept.Output(), err
}

// Tail returns the last maxLines lines of out, at most maxBytes bytes long,
// cut at a line boundary (inside one huge line, at a character boundary),
// and how many lines and bytes were cut from the front.
func Tail(out []byte, maxLines, maxBytes int) (tail []byte, cutLines, cutBytes int) {
	out = bytes.TrimRight(out, "\n")
	start, pos := 0, len(out)
	for n := 0; n < maxLines; n++ {
		i := bytes.LastIndexByte(out[:pos], '\n')
		if i < 0 {
			pos = -1
			break
		}
		pos = i
	}
	if pos >= 0 {
		start = pos + 1
	}
	if len(out)-start > maxBytes {
		start = len(out) - maxBytes
		if i := bytes.IndexByte(out[start:], '\n'); i >= 0 && start+i+1 < len(out) {
			start += i + 1
		} else {
			for start < len(out) && !utf8.RuneStart(out[start]) {
				start++
			}
		}
	}
	return out[start:], bytes.Count(out[:start], []byte{'\n'}), start
}
