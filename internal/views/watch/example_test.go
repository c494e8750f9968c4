package watch_test

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/autoretry/orchestrator/internal/views/watch"
)

// Watch always lints once before it looks at ctx, so a cancelled context
// gives a one-shot lint; a real caller cancels on Ctrl-C.
func ExampleWatch() {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err := watch.Watch(ctx, watch.Options{
		Dir: "testdata/state",
		Out: os.Stdout,
		Now: func() time.Time { return time.Date(2026, 11, 22, 10, 15, 0, 0, time.UTC) },
	})
	fmt.Println("err:", err)
	// Output:
	// 10:15:00 ok: testdata/state/issue_queue.md: 1 issue(s), 1 pending auto-retry
	// err: <nil>
}
