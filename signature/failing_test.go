package signature

import (
	"slices"
	"testing"
)

func TestFailingTests(t *testing.T) {
	tests := []struct {
		name  string
		out   string
		want  []string
		known bool
	}{
		{"go", "=== RUN   TestA\n--- FAIL: TestA (0.00s)\n    a_test.go:3: nope\n--- FAIL: TestB/sub (0.01s)\n--- PASS: TestC (0.00s)\nFAIL\nFAIL\tex.com/m\t0.01s\n", []string{"TestA", "TestB/sub"}, true},
		{"go all pass", "ok  \tex.com/m\t0.01s\n", nil, true},
		{"go build failed", "# ex.com/m\n./a.go:3:1: syntax error\nFAIL\tex.com/m [build failed]\n", nil, false},
		{"pytest summary", "============ short test summary info ============\nFAILED tests/test_a.py::test_one - assert 1 == 2\nERROR tests/test_b.py::test_two\n======= 1 failed, 3 passed in 0.12s =======\n", []string{"tests/test_a.py::test_one", "tests/test_b.py::test_two"}, true},
		{"pytest -v", "tests/test_a.py::test_one FAILED                [ 50%]\ntests/test_a.py::test_two PASSED   [100%]\n", []string{"tests/test_a.py::test_one"}, true},
		{"cargo", "running 2 tests\ntest tests::a ... ok\ntest tests::b ... FAILED\n\ntest result: FAILED. 1 passed; 1 failed\n", []string{"tests::b"}, true},
		{"jest", "FAIL src/a.test.js\n  sum\n    ✓ adds (2 ms)\n    ✕ subtracts (3 ms)\nTests:       1 failed, 1 passed, 2 total\n", []string{"subtracts"}, true},
		{"vitest", " FAIL  src/a.test.ts > sum > subtracts\n × sum > subtracts 3ms\n Tests  1 failed | 1 passed (2)\n", []string{"src/a.test.ts > sum > subtracts", "sum > subtracts"}, true},
		{"coloured", "\x1b[31m--- FAIL: TestA (0.00s)\x1b[0m\n", []string{"TestA"}, true},
		{"unknown", "something broke\nexit status 1\n", nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, known := FailingTests([]byte(tt.out))
			if !slices.Equal(got, tt.want) || known != tt.known {
				t.Errorf("FailingTests = %q, %v; want %q, %v", got, known, tt.want, tt.known)
			}
		})
	}
}
