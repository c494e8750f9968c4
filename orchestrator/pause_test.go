package orchestrator

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/autoretry/orchestrator/issuequeue"
)

// pause writes the file paused: empty until resume, otherwise the time it
// ends in UTC; ReadPause reads back what was written; resume removes it and
// says whether there was a pause.
func TestPauseResume(t *testing.T) {
	o := newTestOrchestrator(t)
	path := filepath.Join(o.Dir, "paused")
	if p, err := ReadPause(o.Dir); err != nil || p.Paused {
		t.Fatalf("before pause: %+v, %v", p, err)
	}
	if err := o.Pause(time.Time{}); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(path); err != nil || len(b) != 0 {
		t.Fatalf("paused file %q, %v; want it empty", b, err)
	}
	if p, err := ReadPause(o.Dir); err != nil || !p.Paused || !p.Until.IsZero() {
		t.Fatalf("paused until resumed: %+v, %v", p, err)
	}

	dublin := time.FixedZone("IST", 3600)
	until := time.Date(2026, 11, 22, 19, 30, 0, 0, dublin)
	if err := o.Pause(until); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(path); string(b) != "2026-11-22T18:30:00Z\n" {
		t.Fatalf("paused file %q, want the end in UTC", b)
	}
	if p, err := ReadPause(o.Dir); err != nil || !p.Paused || !p.Until.Equal(until) {
		t.Fatalf("paused for a while: %+v, %v; want until %v", p, err, until)
	}

	if was, err := o.Resume(); !was || err != nil {
		t.Fatalf("Resume = %v, %v; want true", was, err)
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Fatalf("paused is still there: %v", err)
	}
	if was, err := o.Resume(); was || err != nil {
		t.Fatalf("Resume without a pause = %v, %v; want false, nil", was, err)
	}
}

// Pause refuses a directory that does not exist rather than create it.
func TestPauseNoStateDir(t *testing.T) {
	o := newTestOrchestrator(t)
	o.Dir = filepath.Join(o.Dir, "missing")
	var nd *issuequeue.NoStateDirError
	if err := o.Pause(time.Time{}); !errors.As(err, &nd) {
		t.Fatalf("Pause = %v, want a NoStateDirError", err)
	}
	if _, err := os.Stat(o.Dir); !os.IsNotExist(err) {
		t.Fatal("Pause created the directory")
	}
}

// A pause file written by hand: a blank first line is a pause until
// resumed; only the first line counts; a first line that is not a time is
// still a pause, reported with its place.
func TestReadPauseByHand(t *testing.T) {
	tests := []struct {
		content string
		until   time.Time
		err     string
	}{
		{"\n", time.Time{}, ""},
		{"   \t\n", time.Time{}, ""},
		{"2026-11-22T18:30:00Z", time.Date(2026, 11, 22, 18, 30, 0, 0, time.UTC), ""},
		{" 2026-11-22T18:30:00+02:00 \nignored\n", time.Date(2026, 11, 22, 16, 30, 0, 0, time.UTC), ""},
		{"\n2026-11-22T18:30:00Z\n", time.Time{}, ""},
		{"tomorrow\n", time.Time{}, `paused:1:1: "tomorrow" is not an RFC 3339 time`},
		{"2026-11-22 18:30\n", time.Time{}, "is not an RFC 3339 time"},
	}
	for _, tt := range tests {
		o := newTestOrchestrator(t)
		if err := os.WriteFile(filepath.Join(o.Dir, "paused"), []byte(tt.content), 0o644); err != nil {
			t.Fatal(err)
		}
		p, err := ReadPause(o.Dir)
		if !p.Paused || !p.Until.Equal(tt.until) {
			t.Errorf("%q: %+v, want paused until %v", tt.content, p, tt.until)
		}
		if (err == nil) != (tt.err == "") || err != nil && !strings.Contains(err.Error(), tt.err) {
			t.Errorf("%q: error %v, want %q", tt.content, err, tt.err)
		}
	}
}
