package procgroup

import "sync"

// A Stopper stops a running command from outside, with a reason: the
// caller passes it in Spec.Stop and calls Stop when something it read in
// the output, such as a cost report past a budget, means the command must
// not go on. The zero value is ready to use. A Stopper serves one Run and
// must not be copied after first use.
type Stopper struct {
	mu     sync.Mutex
	done   chan struct{} // closed by the first Stop
	reason string
}

// Stop makes the Run that was given the Stopper stop its command as a
// timeout does, and report reason in Result.StoppedBy; an empty reason is
// reported as "stopped". Only the first call counts. Stop does not wait for
// the command to stop: it may be called from any goroutine at any time,
// including from inside Spec.Output's Write, and after Run has returned,
// when it has no effect.
func (s *Stopper) Stop(reason string) {
	if reason == "" {
		reason = "stopped"
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.reason != "" {
		return
	}
	s.reason = reason
	if s.done == nil {
		s.done = make(chan struct{})
	}
	close(s.done)
}

// fired returns a channel closed once Stop has been called; nil, which
// never becomes ready, for a nil Stopper.
func (s *Stopper) fired() <-chan struct{} {
	if s == nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.done == nil {
		s.done = make(chan struct{})
	}
	return s.done
}

// Reason returns the reason given to the first Stop, or "" before it.
func (s *Stopper) Reason() string {
	if s == nil {
		return ""
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.reason
}
