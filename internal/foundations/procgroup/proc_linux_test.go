package procgroup

import (
	"fmt"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

func TestParseStatOfThisProcess(t *testing.T) {
	p, err := readStat(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if got, want := p.pid, os.Getpid(); got != want {
		t.Errorf("pid = %d, want %d", got, want)
	}
	if got, want := p.ppid, os.Getppid(); got != want {
		t.Errorf("ppid = %d, want %d", got, want)
	}
	if got, want := p.pgid, syscall.Getpgrp(); got != want {
		t.Errorf("pgid = %d, want %d", got, want)
	}
	if p.start == 0 {
		t.Error("start time is 0")
	}
}

func TestParseStatRejects(t *testing.T) {
	for _, in := range []string{
		"",
		"42",
		"(sh) S 1 2",
		"x (sh) S 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20",
		"42 (sh) S 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18",
		"42 (sh) SS 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20",
		"42 (sh) S x 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20",
		"42 (sh) S 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 -1 20",
		"42 sh) S 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20",
	} {
		if p, err := parseStat([]byte(in)); err == nil {
			t.Errorf("parseStat(%q) = %+v, want an error", in, p)
		}
	}
}

// statLine formats a line as the kernel writes /proc/PID/stat.
func statLine(pid int, comm string, state byte, ppid, pgid int, start uint64) string {
	return fmt.Sprintf("%d (%s) %c %d %d %d 0 -1 4194560 110 0 0 0 0 0 0 0 20 0 1 0 %d 2564096 233 "+
		"18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0 0 0 0 0 0 0 0 0\n",
		pid, comm, state, ppid, pgid, pgid, start)
}

func FuzzParseStat(f *testing.F) {
	f.Fuzz(func(t *testing.T, comm string, pid, ppid, pgid int, start uint64) {
		if pid <= 0 || strings.ContainsAny(comm, "\x00") {
			return
		}
		line := statLine(pid, comm, 'S', ppid, pgid, start)
		p, err := parseStat([]byte(line))
		if err != nil {
			t.Fatalf("parseStat(%q): %v", line, err)
		}
		if want := (proc{pid: pid, ppid: ppid, pgid: pgid, state: 'S', start: start}); p != want {
			t.Errorf("parseStat(%q) = %+v, want %+v", line, p, want)
		}
		// Truncated or damaged lines must be rejected or parsed, never panic.
		for i := range len(line) {
			parseStat([]byte(line[:i]))
		}
	})
}

func TestMarkerValues(t *testing.T) {
	tests := []struct {
		environ string
		want    []string
	}{
		{"", nil},
		{"A=1\x00B=2\x00", nil},
		{"A=1\x00" + MarkerEnv + "=t1\x00B=2\x00", []string{"t1"}},
		{MarkerEnv + "=outer:t2", []string{"outer", "t2"}},
		{"X" + MarkerEnv + "=t3\x00" + MarkerEnv + "X=t4\x00", nil},
		{MarkerEnv + "=a\x00" + MarkerEnv + "=b\x00", []string{"a", "b"}},
	}
	for _, tt := range tests {
		if got := markerValues([]byte(tt.environ)); !slices.Equal(got, tt.want) {
			t.Errorf("markerValues(%q) = %q, want %q", tt.environ, got, tt.want)
		}
	}
}

func TestWithMarker(t *testing.T) {
	tests := []struct {
		env  []string
		want []string
	}{
		{nil, []string{MarkerEnv + "=tok"}},
		{[]string{"A=1"}, []string{"A=1", MarkerEnv + "=tok"}},
		{[]string{MarkerEnv + "=outer", "A=1"}, []string{"A=1", MarkerEnv + "=outer:tok"}},
		{[]string{MarkerEnv + "=x", MarkerEnv + "=y"}, []string{MarkerEnv + "=y:tok"}},
		{[]string{MarkerEnv + "="}, []string{MarkerEnv + "=tok"}},
	}
	for _, tt := range tests {
		if got := withMarker(tt.env, "tok"); !slices.Equal(got, tt.want) {
			t.Errorf("withMarker(%q) = %q, want %q", tt.env, got, tt.want)
		}
	}
}

func FuzzParseDecimal(f *testing.F) {
	f.Fuzz(func(t *testing.T, s string) {
		want, err := strconv.ParseInt(s, 10, 0)
		if strings.HasPrefix(s, "+") || want == math.MinInt {
			return // not in /proc; parseDecimal rejects both
		}
		got, ok := parseDecimal([]byte(s))
		if ok != (err == nil) || ok && int64(got) != want {
			t.Errorf("parseDecimal(%q) = %d, %v; strconv.ParseInt: %d, %v", s, got, ok, want, err)
		}
		uwant, err := strconv.ParseUint(s, 10, 64)
		if strings.HasPrefix(s, "+") {
			return
		}
		ugot, ok := parseUnsigned([]byte(s))
		if ok != (err == nil) || ok && ugot != uwant {
			t.Errorf("parseUnsigned(%q) = %d, %v; strconv.ParseUint: %d, %v", s, ugot, ok, uwant, err)
		}
	})
}
