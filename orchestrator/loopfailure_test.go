package orchestrator

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/autoretry/orchestrator/internal/foundations/procgroup"
)

func TestExitStatus(t *testing.T) {
	for _, c := range []struct {
		res  procgroup.Result
		want string
	}{
		{procgroup.Result{ExitCode: 1}, "exit status 1"},
		{procgroup.Result{ExitCode: 139}, "exit status 139 (SIGSEGV)"},
		{procgroup.Result{ExitCode: 134}, "exit status 134 (SIGABRT)"},
		{procgroup.Result{ExitCode: 137, Signal: "SIGKILL"}, "killed by SIGKILL"},
		{procgroup.Result{ExitCode: -1, TimedOut: true}, "timed out after 30m0s"},
		{procgroup.Result{ExitCode: 200}, "exit status 200"},
	} {
		if got := ExitStatus(c.res, 30*time.Minute); got != c.want {
			t.Errorf("ExitStatus(%+v) = %q, want %q", c.res, got, c.want)
		}
	}
}

func TestLastLines(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"", ""},
		{"one", "one"},
		{"a\nb\n\n\nc\nd\ne\nf\n\n", "b\nc\nd\ne\nf"},
		{"\x1b[31mred\x1b[0m\r\n", "red"},
	} {
		if got := LastLines([]byte(c.in), 5); got != c.want {
			t.Errorf("LastLines(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// The loop after one that crashed is told how it crashed: its exit status
// and last lines are in the next loop's retry context.
func TestRetryContextShowsLastLoopCrash(t *testing.T) {
	s := newSim(t)
	var context2 string
	s.agent = func(s *sim, kind string, try int) procgroup.Result {
		if kind == KindRegular {
			return procgroup.Result{ExitCode: 139, Tail: []byte("starting\nsegfault at 0x0 ip 00007f3a\n")}
		}
		return procgroup.Result{}
	}
	s.verify = func(s *sim, id, check string) procgroup.Result { return failed2("--- FAIL: TestServer") }
	r := s.runner()
	exec := r.Exec
	r.Exec = func(ctx context.Context, spec procgroup.Spec) (procgroup.Result, error) {
		if p := env(spec, "ORCHESTRATOR_RETRY_CONTEXT"); p != "" && context2 == "" {
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			context2 = string(b)
		}
		return exec(ctx, spec)
	}
	r.Run(context.Background())
	for _, want := range []string{`<last_loop_failure loop="1" exit="exit status 139 (SIGSEGV)">`, "segfault at 0x0 ip 00007f3a"} {
		if !strings.Contains(context2, want) {
			t.Errorf("the retry context after a crashed loop lacks %q:\n%s", want, context2)
		}
	}
}
