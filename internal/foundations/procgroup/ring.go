package procgroup

// ring keeps the last len(buf) bytes written to it.
type ring struct {
	buf  []byte
	pos  int // where the next byte goes
	full bool
}

func newRing(n int) *ring {
	if n < 0 {
		n = 0
	}
	return &ring{buf: make([]byte, n)}
}

func (r *ring) Write(p []byte) (int, error) {
	n := len(p)
	size := len(r.buf)
	if size == 0 {
		return n, nil
	}
	if len(p) >= size {
		copy(r.buf, p[len(p)-size:])
		r.pos, r.full = 0, true
		return n, nil
	}
	c := copy(r.buf[r.pos:], p)
	copy(r.buf, p[c:])
	if r.pos+len(p) >= size {
		r.full = true
	}
	r.pos = (r.pos + len(p)) % size
	return n, nil
}

// Bytes returns a copy of the kept bytes, oldest first.
func (r *ring) Bytes() []byte {
	if !r.full {
		return append([]byte(nil), r.buf[:r.pos]...)
	}
	out := make([]byte, 0, len(r.buf))
	out = append(out, r.buf[r.pos:]...)
	return append(out, r.buf[:r.pos]...)
}
