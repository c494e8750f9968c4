package orchestrator

import "github.com/fsnotify/fsnotify"

// watchDir calls on with every event in the directory dir, from a goroutine
// of its own, until the returned stop is called. Where dir cannot be
// watched (no fsnotify, as on NFS), on is never called and stop does
// nothing.
func watchDir(dir string, on func(fsnotify.Event)) (stop func()) {
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return func() {}
	}
	if err := w.Add(dir); err != nil {
		w.Close()
		return func() {}
	}
	done := make(chan struct{})
	go func() {
		for {
			select {
			case ev, ok := <-w.Events:
				if !ok {
					return
				}
				on(ev)
			case _, ok := <-w.Errors:
				if !ok {
					return
				}
			case <-done:
				return
			}
		}
	}()
	return func() { close(done); w.Close() }
}
