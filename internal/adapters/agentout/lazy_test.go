package agentout

import "testing"

// The expressions compile on first use, so a typo in one would panic in the
// middle of a run instead of at start-up; this compiles every one of them.
func TestEveryLazyExpressionCompiles(t *testing.T) {
	res := []func() any{func() any { return re429() }, func() any { return reAider() }}
	for i, re := range res {
		if re() == nil {
			t.Errorf("expression %d compiled to nil", i)
		}
	}
}
