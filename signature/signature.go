package signature

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"os"
	"regexp"
)

// Rule set names accepted in Options.Rules.
const (
	// V1 is the first rule set: each line normalized on its own.
	V1 = "v1"
	// V2 is V1's line rules, the workspace root and package caches as
	// placeholders, and test runners' reports reduced to what identifies
	// their failures (see the package documentation).
	V2 = "v2"
	// V3 is the current rule set: V2 and more rules for what changes
	// between runs of one failure (Go races and stacks, long numbers,
	// hypothesis, cargo -q, node's spec reporter; see the package
	// documentation).
	V3 = "v3"
	// Current is the rule set used when none is named.
	Current = V3
	// Off turns normalization off: the signature is the SHA-256 of the
	// output's exact bytes.
	Off = "off"
)

// Options selects the rules of a signature.
type Options struct {
	// Rules is V3 (also when empty), V2, V1 or Off.
	Rules string

	// Root is the workspace root: the directory the failing command ran
	// in, whose path the rules V2 and V3 replace with <root>, so that the same
	// failure in another checkout gets the same signature. Empty: none.
	Root string

	// Extra holds Go regular expressions whose matches are replaced by
	// "<redacted>", line by line, before the built-in rules run. None may
	// match empty text. They are part of normalization: with Off they are
	// checked, then not used.
	Extra []string

	// Getenv looks up TMPDIR, whose paths are masked like those under /tmp.
	// If Getenv is nil, os.Getenv is used.
	Getenv func(string) string
}

// Rules computes signatures with one rule set. A *Rules is immutable and
// safe for concurrent use.
type Rules struct {
	off  bool
	name string
	sc   scanner
	// slowTests sends go -v's lines of tests through the line rules, as
	// the report's quick way would not (a test compares the two).
	slowTests bool
}

// Compile checks o and returns the rules it describes.
func Compile(o Options) (*Rules, error) {
	r := &Rules{name: o.Rules}
	switch o.Rules {
	case "", V3:
		r.name = V3
		r.sc.v2, r.sc.v3 = true, true
	case V2:
		r.sc.v2 = true
	case V1:
	case Off:
		r.off = true
	default:
		return nil, fmt.Errorf("unknown signature rule set %q (known: %q, %q, %q, %q)", o.Rules, V3, V2, V1, Off)
	}
	for _, p := range o.Extra {
		re, err := regexp.Compile(p)
		if err != nil {
			return nil, fmt.Errorf("extra pattern %q: %w", p, err)
		}
		if re.MatchString("") {
			return nil, fmt.Errorf("extra pattern %q matches empty text", p)
		}
		r.sc.extra = append(r.sc.extra, extraPattern{re: re, lit: requiredLiteral(p)})
	}
	if r.off {
		return &Rules{off: true, name: Off}, nil
	}
	getenv := o.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	r.sc.setTempRoots(getenv("TMPDIR"))
	if r.sc.v2 {
		r.sc.setWorkspace(o.Root)
	}
	return r, nil
}

// Older returns the rule sets older than the set name, newest first: those
// whose signatures a caller computes beside name's so that signatures
// recorded before an upgrade still match.
func Older(name string) []string {
	switch name {
	case V3, "":
		return []string{V2, V1}
	case V2:
		return []string{V1}
	}
	return nil
}

// Name returns the name of the rule set: V3, V2, V1 or Off.
func (r *Rules) Name() string { return r.name }

// Sum returns the signature of everything read from rd: 64 lowercase
// hexadecimal digits. Under the rules V2 and V3 it uses every processor
// (up to four) for the line rules; the signature is the same as with one.
func (r *Rules) Sum(rd io.Reader) (string, error) {
	return r.sum(rd, pipelineWorkers())
}

// sum is Sum with the line rules in a pipeline of the given number of
// workers, or none for 0.
func (r *Rules) sum(rd io.Reader, workers int) (string, error) {
	if r.off {
		return Raw(rd)
	}
	// Normalizing and hashing take turns on every piece of output; here
	// they overlap (see hashAside).
	a := newHashAside(2, outSize)
	st := r.newStream(nil)
	st.handoff = a.swap
	if st.rep != nil && workers > 0 {
		st.startPipeline(workers, r.slowTests)
	}
	_, err := io.CopyBuffer(streamWriter{st}, onlyReader{rd}, make([]byte, readSize))
	if err == nil {
		st.close()
	} else if st.pipe != nil {
		st.pipe.wait()
	}
	sum := a.sum()
	if err != nil {
		return "", fmt.Errorf("reading output: %w", err)
	}
	return sum, nil
}

// streamWriter feeds a stream.
type streamWriter struct{ st *stream }

func (w streamWriter) Write(p []byte) (int, error) {
	w.st.write(p)
	return len(p), nil
}

// SumBytes returns the signature of b.
func (r *Rules) SumBytes(b []byte) string {
	d := r.NewDigest()
	d.Write(b)
	return d.Sum()
}

// Explain writes to w the normalized text of what it reads from rd: the
// bytes whose SHA-256 is the signature.
func (r *Rules) Explain(w io.Writer, rd io.Reader) error {
	if r.off {
		_, err := io.Copy(w, rd)
		return err
	}
	nw := r.NewWriter(w)
	if _, err := io.CopyBuffer(nw, onlyReader{rd}, make([]byte, readSize)); err != nil {
		return err
	}
	return nw.Close()
}

// NewWriter returns a writer that normalizes what is written to it, in
// pieces of any size, and writes the normalized text to w. Close writes the
// last line, which may lack its newline; it does not close w.
func (r *Rules) NewWriter(w io.Writer) io.WriteCloser {
	if r.off {
		return nopCloser{w}
	}
	nw := &writer{}
	nw.st = r.newStream(func(b []byte) error {
		_, err := w.Write(b)
		return err
	})
	return nw
}

// NewDigest returns a Digest that computes the signature of what is
// written to it.
func (r *Rules) NewDigest() *Digest {
	d := &Digest{h: sha256.New()}
	if !r.off {
		d.st = r.newStream(func(b []byte) error {
			d.h.Write(b)
			return nil
		})
	}
	return d
}

// A Digest computes a signature of output written to it in pieces of any
// size, so that a caller can hash a command's output while it copies the
// output elsewhere (io.MultiWriter). Its memory stays bounded.
type Digest struct {
	st     *stream // nil: raw bytes
	h      hash.Hash
	closed bool
}

// Write adds p to the output. It fails only after Close or Sum.
func (d *Digest) Write(p []byte) (int, error) {
	if d.closed {
		return 0, errors.New("signature: write after close")
	}
	if d.st == nil {
		return d.h.Write(p)
	}
	d.st.write(p)
	return len(p), nil
}

// Close marks the end of the output. Writes after Close fail.
func (d *Digest) Close() error {
	if !d.closed {
		d.closed = true
		if d.st != nil {
			d.st.close()
		}
	}
	return nil
}

// Sum closes the digest and returns the signature: 64 lowercase
// hexadecimal digits.
func (d *Digest) Sum() string {
	d.Close()
	return hex.EncodeToString(d.h.Sum(nil))
}

// Raw returns the SHA-256 of the bytes read from rd, as sha256sum prints it.
func Raw(rd io.Reader) (string, error) {
	// Reading and hashing overlap (see hashAside).
	a := newHashAside(2, readSize)
	b := make([]byte, readSize)
	for {
		n, err := io.ReadFull(rd, b[:cap(b)])
		if n > 0 {
			b = a.swap(b[:n])
		}
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			return a.sum(), nil
		}
		if err != nil {
			a.sum()
			return "", fmt.Errorf("reading output: %w", err)
		}
	}
}

// hashAside hashes pieces of bytes on a goroutine of its own, so that
// reading or normalizing the next piece overlaps hashing the last; the
// buffers handed to it come back, emptied, to be filled again.
type hashAside struct {
	h          hash.Hash
	full, free chan []byte
	done       chan struct{}
}

// newHashAside starts a hashAside with n buffers of size bytes of its own
// to give back; the caller fills one more.
func newHashAside(n, size int) *hashAside {
	a := &hashAside{h: sha256.New(), full: make(chan []byte, n), free: make(chan []byte, n), done: make(chan struct{})}
	for range n {
		a.free <- make([]byte, 0, size)
	}
	go func() {
		defer close(a.done)
		for b := range a.full {
			a.h.Write(b)
			a.free <- b[:0]
		}
	}()
	return a
}

// swap hands b over to be hashed and returns an empty buffer to fill.
func (a *hashAside) swap(b []byte) []byte {
	a.full <- b
	return <-a.free
}

// sum waits until every piece handed over is hashed and returns the hash,
// in hexadecimal. The hashAside is done with.
func (a *hashAside) sum() string {
	close(a.full)
	<-a.done
	return hex.EncodeToString(a.h.Sum(nil))
}

// readSize is the size of the buffer output is read with: large enough
// that system calls cost little, small enough for the memory bar.
const readSize = 256 << 10

// onlyReader hides a reader's WriterTo, so that io.CopyBuffer uses our
// buffer instead of the reader's own 32 KiB one.
type onlyReader struct{ io.Reader }

type nopCloser struct{ io.Writer }

func (nopCloser) Close() error { return nil }

// writer is the io.WriteCloser of NewWriter.
type writer struct {
	st     *stream
	closed bool
}

func (w *writer) Write(p []byte) (int, error) {
	if w.closed {
		return 0, errors.New("signature: write after close")
	}
	if w.st.err != nil {
		return 0, w.st.err
	}
	w.st.write(p)
	if w.st.err != nil {
		return 0, w.st.err
	}
	return len(p), nil
}

func (w *writer) Close() error {
	if w.closed {
		return w.st.err
	}
	w.closed = true
	w.st.close()
	return w.st.err
}
