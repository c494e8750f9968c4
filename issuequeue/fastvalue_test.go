package issuequeue

import (
	"slices"
	"strings"
	"testing"
	"time"
)

// utcTime must read what time.Parse reads, the same way, and leave the rest
// to it.
func TestUTCTimeAgreesWithTimeParse(t *testing.T) {
	for _, v := range []string{
		"2026-11-22T10:00:00Z", "2024-02-29T23:59:59Z", "2023-02-29T00:00:00Z", "2026-04-31T00:00:00Z",
		"2026-13-01T00:00:00Z", "2026-00-10T00:00:00Z", "2026-01-00T00:00:00Z", "2026-01-01T24:00:00Z",
		"2026-01-01T00:60:00Z", "2026-01-01T00:00:60Z", "0000-01-01T00:00:00Z", "9999-12-31T23:59:59Z",
		"2026-01-01t00:00:00z", "2026-01-01T00:00:00+01:00", "2026-01-01T00:00:00.5Z", "2026-1-01T00:00:00Z",
		"20a6-01-01T00:00:00Z", "2026-01-01 00:00:00Z", "", "2026-01-01T00:00:00", "1900-02-29T00:00:00Z",
		"2000-02-29T12:30:45Z",
	} {
		got, ok := utcTime([]byte(v))
		want, err := time.Parse(time.RFC3339, v)
		if ok && (err != nil || !got.Equal(want) || got.Location() != want.Location() || got != want) {
			t.Errorf("utcTime(%q) = %v; time.Parse = %v, %v", v, got, want, err)
		}
		if !ok && err == nil && len(v) == 20 && v[19] == 'Z' && v[10] == 'T' {
			t.Errorf("utcTime(%q) refused what time.Parse reads as %v", v, want)
		}
	}
}

func FuzzUTCTime(f *testing.F) {
	f.Add("2026-11-22T10:00:00Z")
	f.Add("2024-02-29T23:59:59Z")
	f.Fuzz(func(t *testing.T, v string) {
		got, ok := utcTime([]byte(v))
		if !ok {
			return
		}
		want, err := time.Parse(time.RFC3339, v)
		if err != nil || got != want {
			t.Fatalf("utcTime(%q) = %v; time.Parse = %v, %v", v, got, want, err)
		}
	})
}

// signatureList must read what ParseSignatureList reads, the same way, and
// leave the rest to it.
func TestSignatureListAgreesWithParseSignatureList(t *testing.T) {
	a, b := strings.Repeat("a", 64), strings.Repeat("0123456789abcdef", 1)
	for _, v := range []string{
		"[]", "[ ]", "[" + a + "]", "[" + a + ", " + b + "]", " [ " + a + " ,  " + b + " ] ",
		"[" + a + ",]", "[," + a + "]", "[" + a + ",," + b + "]", "[" + strings.ToUpper(a) + "]",
		a, "[" + a, a + "]", "[x]", "[" + a + " " + b + "]", "", "[" + b + "\t,\t" + a + "]",
	} {
		got, ok := signatureList([]byte(v), &tableBuf{})
		want, err := ParseSignatureList(v)
		if ok && (err != nil || !slices.Equal(got, want)) {
			t.Errorf("signatureList(%q) = %q; ParseSignatureList = %q, %v", v, got, want, err)
		}
	}
}

func FuzzSignatureList(f *testing.F) {
	f.Add("[" + strings.Repeat("a", 64) + ", " + strings.Repeat("b", 16) + "]")
	f.Fuzz(func(t *testing.T, v string) {
		got, ok := signatureList([]byte(v), &tableBuf{})
		if !ok {
			return
		}
		want, err := ParseSignatureList(v)
		if err != nil || !slices.Equal(got, want) {
			t.Fatalf("signatureList(%q) = %q; ParseSignatureList = %q, %v", v, got, want, err)
		}
	})
}
