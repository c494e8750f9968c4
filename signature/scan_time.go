package signature

// The line rules for times: dates, clocks, durations, Unix times.

// timestamp returns the end of a date, a date and time, or a clock time
// starting at b[i], or 0. Dates are 2006-01-02 or 2006/01/02, followed by
// "T" or spaces and a clock; clocks are 15:04:05 with an optional fraction
// (.000 or ,000) and zone (Z, +07:00, -0700, " -0700 MST" and Go's
// monotonic " m=+0.001").
//
// The match must end a word. If the longest form does not, shorter ones
// are tried (without the zone, then the fraction, then the clock): what
// follows may be replaced by another rule, and the shorter form is what a
// second normalization would see.
func timestamp(b []byte, i int) int {
	n := len(b)
	ends := func(e int) bool { return e == n || !isWord(b[e]) }
	date := 0
	k := i
	if digitsAt(b, i, 4) && i+10 <= n && (b[i+4] == '-' || b[i+4] == '/') && b[i+7] == b[i+4] &&
		digitsAt(b, i+5, 2) && digitsAt(b, i+8, 2) {
		date = i + 10
		if date == n || (b[date] != 'T' && !isSpace(b[date])) {
			if ends(date) {
				return date
			}
			return 0
		}
		k = date + 1
		if b[date] != 'T' {
			k = skipSpace(b, date)
		}
	}
	if sec, frac := clock(b, k); sec > 0 {
		for _, e := range [...]int{zone(b, frac), frac, sec} {
			if ends(e) {
				return e
			}
		}
	}
	if date > 0 && ends(date) {
		return date
	}
	return 0
}

// clock reads H:MM:SS or HH:MM:SS at b[i:] and returns where the seconds
// end and where an optional fraction (.000 or ,000) ends, or 0, 0.
func clock(b []byte, i int) (sec, frac int) {
	n := len(b)
	k := i
	if digitsAt(b, k, 2) {
		k += 2
	} else if digitsAt(b, k, 1) {
		k++
	} else {
		return 0, 0
	}
	if k+6 > n || b[k] != ':' || !digitsAt(b, k+1, 2) || b[k+3] != ':' || !digitsAt(b, k+4, 2) {
		return 0, 0
	}
	k += 6
	sec = k
	switch {
	case k+1 < n && b[k] == '.' && isDigit(b[k+1]):
		k++
		for k < n && isDigit(b[k]) {
			k++
		}
	case k+3 < n && b[k] == ',' && digitsAt(b, k+1, 3):
		k += 4
	}
	return sec, k
}

// zone returns the end of the time zone and monotonic clock reading that
// may follow a clock ending at b[k].
func zone(b []byte, k int) int {
	n := len(b)
	if k >= n {
		return k
	}
	switch b[k] {
	case 'Z':
		return k + 1
	case '+', '-':
		if !digitsAt(b, k+1, 2) {
			return k
		}
		m := k + 3
		switch {
		case m+2 < n && b[m] == ':' && digitsAt(b, m+1, 2):
			m += 3
		case digitsAt(b, m, 2):
			m += 2
		}
		if m < n && isDigit(b[m]) {
			return k
		}
		return m
	case ' ':
		// Go's time.Time.String: "-0700 MST m=+0.001234567".
		if k+6 > n || (b[k+1] != '+' && b[k+1] != '-') || !digitsAt(b, k+2, 4) || (k+6 < n && isWord(b[k+6])) {
			return k
		}
		m := k + 6
		if m+1 < n && b[m] == ' ' {
			l := m + 1
			if b[l] == '+' || b[l] == '-' {
				l++
			}
			s := l
			for l < n && l-s < 6 && (b[l]-'A' < 26 || isDigit(b[l])) {
				l++
			}
			if l-s >= 2 && (l == n || !isWord(b[l])) {
				m = l
			}
		}
		if m+4 < n && b[m] == ' ' && b[m+1] == 'm' && b[m+2] == '=' && (b[m+3] == '+' || b[m+3] == '-') && isDigit(b[m+4]) {
			l := m + 4
			for l < n && (isDigit(b[l]) || b[l] == '.') {
				l++
			}
			m = l
		}
		return m
	}
	return k
}

// duration returns the end of a duration starting at b[i], or 0: 0.03s,
// 12ms, 1.5µs, 1m30s, 2h0m0s, and with a space (jest, mocha) 12 ms, 0.5 s,
// 3 seconds.
func duration(b []byte, i int) int {
	n := len(b)
	k := i
	for first := true; ; first = false {
		s := k
		for k < n && isDigit(b[k]) {
			k++
		}
		if k == s {
			return 0
		}
		if k+1 < n && b[k] == '.' && isDigit(b[k+1]) {
			k += 2
			for k < n && isDigit(b[k]) {
				k++
			}
		}
		if u, short := unit(b, k); u > 0 {
			k += u
			if short && k < n && isDigit(b[k]) {
				continue
			}
			break
		}
		if !first {
			return 0
		}
		if ws := skipSpace(b, k); ws > k {
			if u, _ := unit(b, ws); u > 0 && spacedUnit(b[ws:ws+u]) {
				k = ws + u
				// The unit starts a word of its own; digits may end that
				// word ("3 s12345"), and are replaced on their own later.
				if k < n && b[k] == '_' {
					return 0
				}
				return k
			}
		}
		return 0
	}
	if k < n && isWord(b[k]) {
		return 0
	}
	return k
}

// unit returns the length of the time unit at b[k:], or 0, and whether it
// is one of Go's (h, m, s, ms, us, µs, ns), which may be followed by the
// next part of a compound duration (1m30s).
func unit(b []byte, k int) (size int, short bool) {
	n := len(b)
	l := k
	if k+1 < n && ((b[k] == 0xc2 && b[k+1] == 0xb5) || (b[k] == 0xce && b[k+1] == 0xbc)) { // µ, μ
		l = k + 2
		if l < n && b[l] == 's' && (l+1 == n || !isLetter(b[l+1])) {
			return l + 1 - k, true
		}
		return 0, false
	}
	for l < n && isLetter(b[l]) {
		l++
	}
	switch string(b[k:l]) {
	case "h", "m", "s", "ms", "us", "ns":
		return l - k, true
	case "sec", "secs", "second", "seconds", "min", "mins", "minute", "minutes", "hr", "hrs", "hour", "hours":
		return l - k, false
	}
	return 0, false
}

// spacedUnit reports whether a unit may stand after a space: not "h" and
// "m", which are too often something else.
func spacedUnit(u []byte) bool {
	return string(u) != "h" && string(u) != "m"
}

// compactDate reports whether the digits d read as a date of this
// century written without separators, with or without its time:
// YYYYMMDD, YYYYMMDDhhmm or YYYYMMDDhhmmss (rules V3).
func compactDate(d []byte) bool {
	switch len(d) {
	case 8, 12, 14:
	default:
		return false
	}
	num := func(k int) int { return int(d[k]-'0')*10 + int(d[k+1]-'0') }
	if d[0] != '2' || d[1] != '0' || num(4) < 1 || num(4) > 12 || num(6) < 1 || num(6) > 31 {
		return false
	}
	return len(d) == 8 || num(8) < 24 && num(10) < 60 && (len(d) == 12 || num(12) < 60)
}

// unixTime reports whether the digits d read as a Unix time of the years
// 2017 to 2042, in seconds, milliseconds, microseconds or nanoseconds
// (rules V3): a time a run prints, such as a random seed taken from the
// clock. Other long numbers are values, which tell failures apart (a hash
// test's 16388950234918537544 and 14695981039346656037).
func unixTime(d []byte) bool {
	switch len(d) {
	case 10, 13, 16, 19:
	default:
		return false
	}
	return string(d[:10]) >= "1500000000" && string(d[:10]) < "2300000000"
}
