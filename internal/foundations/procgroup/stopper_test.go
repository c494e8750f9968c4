package procgroup

import (
	"sync"
	"testing"
)

func TestStopperFirstReasonWins(t *testing.T) {
	var s Stopper
	select {
	case <-s.fired():
		t.Fatal("a new Stopper has fired")
	default:
	}
	if got := s.Reason(); got != "" {
		t.Errorf("reason before Stop = %q, want none", got)
	}
	s.Stop("cost $2.10 is over the $2.00 budget")
	s.Stop("second")
	select {
	case <-s.fired():
	default:
		t.Fatal("Stop did not fire the Stopper")
	}
	if got, want := s.Reason(), "cost $2.10 is over the $2.00 budget"; got != want {
		t.Errorf("reason = %q, want %q", got, want)
	}
}

func TestStopperEmptyReason(t *testing.T) {
	var s Stopper
	s.Stop("")
	if got, want := s.Reason(), "stopped"; got != want {
		t.Errorf("reason = %q, want %q", got, want)
	}
}

// Run with -race: Stop from many goroutines while another waits.
func TestStopperConcurrentStops(t *testing.T) {
	var s Stopper
	reasons := []string{"a", "b", "c", "d", "e", "f", "g", "h"}
	fired := s.fired()
	var wg sync.WaitGroup
	for _, r := range reasons {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s.Stop(r)
		}()
	}
	<-fired
	first := s.Reason()
	wg.Wait()
	if got := s.Reason(); got != first || got == "" {
		t.Errorf("reason changed from %q to %q after the first Stop", first, got)
	}
}

func TestNilStopperNeverFires(t *testing.T) {
	var s *Stopper
	if s.fired() != nil || s.Reason() != "" {
		t.Error("a nil Stopper fired")
	}
}
