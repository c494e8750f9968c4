package orchestrator

import (
	"context"
	"errors"
	"path/filepath"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/autoretry/orchestrator/issuequeue"
)

func (r *Runner) sentinelPresent() bool {
	return r.sentinel.Load() || r.O.paths().SentinelPresent()
}

// watchSentinel notices no_auto_retry as soon as it is created (the
// running loop finishes: in-flight work is never killed for it; no further
// loop starts). Without fsnotify (NFS) the
// stat before every loop still catches it.
func (r *Runner) watchSentinel() func() {
	return watchDir(r.O.Dir, func(ev fsnotify.Event) {
		if filepath.Base(ev.Name) == issuequeue.SentinelFile && ev.Has(fsnotify.Create) {
			r.sentinel.Store(true)
			r.progress("no_auto_retry appeared: the running loop finishes, no further loop starts")
		}
	})
}

var (
	errSentinel = errors.New("sentinel")
	errAborted  = errors.New("aborted")
)

// sleepWatching sleeps d, waking early if the sentinel appears.
func (r *Runner) sleepWatching(ctx context.Context, d time.Duration) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	done := make(chan struct{})
	defer close(done)
	go func() {
		t := time.NewTicker(200 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				if r.sentinelPresent() {
					cancel()
					return
				}
			}
		}
	}()
	err := r.sleep(ctx, d)
	if err != nil && r.sentinelPresent() {
		return errSentinel
	}
	return err
}
