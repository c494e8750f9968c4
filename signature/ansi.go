package signature

import "bytes"

// StripANSI appends b to dst without its terminal escape sequences: CSI
// (colours, cursor movement), OSC (titles, hyperlinks) and the other
// ESC-started sequences. A lone ESC is dropped. The rules use it on every
// line that holds an ESC; it is exported for callers that show output to
// people.
func StripANSI(dst, b []byte) []byte {
	for {
		k := bytes.IndexByte(b, 0x1b)
		if k < 0 {
			return append(dst, b...)
		}
		dst = append(dst, b[:k]...)
		b = b[k+1:]
		if len(b) == 0 {
			return dst
		}
		j := 1
		switch c := b[0]; {
		case c == '[': // CSI: parameters and intermediates, then a final byte
			for j < len(b) && b[j] >= 0x20 && b[j] <= 0x3f {
				j++
			}
			if j < len(b) && b[j] >= 0x40 && b[j] <= 0x7e {
				j++
			}
		case c == ']' || c == 'P' || c == 'X' || c == '^' || c == '_': // OSC, DCS, SOS, PM, APC: a string up to BEL or ST
			for j < len(b) && b[j] != 0x07 && b[j] != 0x1b {
				j++
			}
			if j < len(b) && b[j] == 0x07 {
				j++
			} else if j+1 < len(b) && b[j+1] == '\\' {
				j += 2
			}
		case c >= 0x20 && c <= 0x2f: // nF: intermediates, then a final byte (ESC ( B)
			for j < len(b) && b[j] >= 0x20 && b[j] <= 0x2f {
				j++
			}
			if j < len(b) && b[j] >= 0x30 && b[j] <= 0x7e {
				j++
			}
		case c >= 0x30 && c <= 0x7e: // two-byte sequences (ESC 7, ESC M)
		default: // a lone ESC
			j = 0
		}
		b = b[j:]
	}
}
