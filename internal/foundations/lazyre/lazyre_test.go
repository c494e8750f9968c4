package lazyre

import "testing"

// The expression is compiled once and is the one given.
func TestNew(t *testing.T) {
	re := New(`a(b+)c`)
	first := re()
	if re() != first {
		t.Error("compiled again on the second call")
	}
	if m := first.FindStringSubmatch("xabbbc"); len(m) != 2 || m[1] != "bbb" {
		t.Errorf("match %q, want the group bbb", m)
	}
}
