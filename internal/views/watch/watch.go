// Package watch lints a state directory every time one of its files changes
// and, if asked, starts a run when an auto-retry issue is waiting.
package watch

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/autoretry/orchestrator/internal/foundations/statefile"
	"github.com/autoretry/orchestrator/issuequeue"
)

// DefaultDebounce is how long a file must stay quiet before its change is
// handled: editors, agents and the tool write a file in several steps
// (backup, write, rename), and only the result is worth a lint.
const DefaultDebounce = 100 * time.Millisecond

// TemplatesDir is the directory of template overrides inside the state
// directory.
const TemplatesDir = "templates"

// Options says what Watch watches and where it reports.
type Options struct {
	// Dir is the state directory. It must exist when Watch starts; if it
	// goes away later, Watch waits for it to come back.
	Dir string
	// ConfigPath is the configuration file; "" means Dir/config.toml. A
	// missing file means the defaults, as for every command.
	ConfigPath string
	// Getenv is the environment applied on top of the configuration file,
	// so that a bad ORCHESTRATOR_<SECTION>_<KEY> is reported too. If Getenv
	// is nil, no environment is applied.
	Getenv func(string) string

	// Out receives every line Watch prints, each stamped with the time of
	// day. Watch reports nothing anywhere else.
	Out io.Writer
	// Now stamps the lines. If Now is nil, Watch uses time.Now.
	Now func() time.Time
	// Debounce is how long a file must stay quiet before its change is
	// handled. If Debounce is 0, Watch uses DefaultDebounce.
	Debounce time.Duration
	// OKLine formats the summary printed when nothing is wrong. If OKLine
	// is nil, Watch prints what orchestrator lint prints:
	// "ok: DIR/issue_queue.md: N issue(s), M pending auto-retry".
	OKLine func(q *issuequeue.Queue) string

	// OnPending, if not nil, starts a run. Watch calls it, in a goroutine of
	// its own, after a change (or at start) leaves the state valid, an issue
	// pending for auto-retry (Auto-Retry true, Status pending, not Halted),
	// auto-retry enabled (no sentinel, auto_retry_enabled true) and the run
	// lock free. It never calls it again while a call is under way, nor for
	// changes made while any run held the lock: those are that run's to
	// handle. out is safe to write to while Watch prints: it passes on
	// whole lines. OnPending must return soon after ctx is done.
	OnPending func(ctx context.Context, out io.Writer) error
}

// Watch lints the state directory once, then again every time
// issue_queue.md, session_state.md, the configuration, no_auto_retry or a
// template override changes, until ctx is done; then it returns nil, after
// a run started by OnPending has returned. The first lint happens even if
// ctx is already done.
//
// It watches the directories, not the files, so that a file an editor
// replaces by renaming over it, or that is deleted and created again, is
// still seen; if Dir itself goes away, it says so and watches the parent
// for its return. A change that leaves every file with the content it had
// at the last lint prints nothing; so do changes to other files, chmods and
// editors' temporary files. Findings are printed one per line as
// "HH:MM:SS FILE:LINE:COL: message"; a clean directory gives one ok line.
//
// Watch fails at start if Dir does not exist (*issuequeue.NoStateDirError)
// or cannot be watched, and later only if Out cannot be written to. File
// systems that deliver no change events (NFS, SMB) leave it silent.
func Watch(ctx context.Context, o Options) error {
	fw, err := fsnotify.NewWatcher()
	if err != nil {
		return fmt.Errorf("watching %s: %w", o.Dir, err)
	}
	defer fw.Close()
	w, err := newWatcher(o, fw)
	if err != nil {
		return err
	}
	if err := fw.Add(w.abs.dir); err != nil {
		return fmt.Errorf("watching %s: %w", o.Dir, err)
	}
	if w.abs.cfgDir != w.abs.dir {
		// A missing directory of --config is not fatal: the file reads as
		// missing, like config.toml itself.
		_ = fw.Add(w.abs.cfgDir)
	}
	return w.loop(ctx, fw.Events, fw.Errors)
}

// absPaths are the watched paths made absolute and clean, the form event
// names take.
type absPaths struct {
	dir, parent, templates string
	queue, state, sentinel string
	lock                   string
	cfg, cfgDir            string
}

type watcher struct {
	o     Options
	paths issuequeue.Paths // paths as the user gave them, for messages
	cfg   string           // config path as given
	tmpl  string           // templates directory as given
	abs   absPaths
	fw    *fsnotify.Watcher

	mu     sync.Mutex // serialises writes to o.Out
	outErr error

	last     string // digest of the files at the last lint; "" before the first
	lastLint lintResult
	disabled string // why auto-retry is disabled, "" when it is enabled
	dirGone  bool
	parentOn bool // the parent directory is watched, waiting for Dir

	running  bool       // OnPending is under way
	done     chan error // OnPending's result
	runSeen  bool       // a run held the lock since the last scan that could start one
	runOwner statefile.Owner
}

func newWatcher(o Options, fw *fsnotify.Watcher) (*watcher, error) {
	if fi, err := os.Stat(o.Dir); err != nil || !fi.IsDir() {
		return nil, &issuequeue.NoStateDirError{Dir: o.Dir}
	}
	if o.Debounce <= 0 {
		o.Debounce = DefaultDebounce
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	w := &watcher{o: o, paths: issuequeue.Paths{Dir: o.Dir}, fw: fw, done: make(chan error, 1)}
	w.cfg = o.ConfigPath
	if w.cfg == "" {
		w.cfg = filepath.Join(o.Dir, "config.toml")
	}
	w.tmpl = filepath.Join(o.Dir, TemplatesDir)
	dir, err := filepath.Abs(o.Dir)
	if err != nil {
		return nil, fmt.Errorf("watching %s: %w", o.Dir, err)
	}
	cfg, err := filepath.Abs(w.cfg)
	if err != nil {
		return nil, fmt.Errorf("watching %s: %w", w.cfg, err)
	}
	w.abs = absPaths{
		dir: dir, parent: filepath.Dir(dir), templates: filepath.Join(dir, TemplatesDir),
		queue:    filepath.Join(dir, issuequeue.QueueFile),
		state:    filepath.Join(dir, issuequeue.StateFile),
		sentinel: filepath.Join(dir, issuequeue.SentinelFile),
		lock:     filepath.Join(dir, statefile.LockFile),
		cfg:      cfg, cfgDir: filepath.Dir(cfg),
	}
	return w, nil
}

// Keys of changes that are not one file's.
const (
	keyDir    = "\x00dir"    // the state directory itself came or went
	keyRescan = "\x00rescan" // events were lost: look at everything
)

// route returns the debounce key of an event, or false for an event that
// cannot change what Watch reports: a chmod (Linux also sends one before a
// delete, which is followed by its own event), another file, an editor's
// temporary file.
func (w *watcher) route(ev fsnotify.Event) (string, bool) {
	if ev.Op&^fsnotify.Chmod == 0 {
		return "", false
	}
	name := filepath.Clean(ev.Name)
	switch name {
	case w.abs.dir:
		return keyDir, true
	case w.abs.queue, w.abs.state, w.abs.sentinel, w.abs.cfg, w.abs.templates:
		return name, true
	case w.abs.lock:
		// The lock file changes when a run or a command takes or leaves a
		// lock; only --run cares who holds it.
		return name, w.o.OnPending != nil
	}
	if filepath.Dir(name) == w.abs.templates && strings.HasSuffix(name, ".tmpl") {
		return name, true
	}
	return "", false
}

func (w *watcher) loop(ctx context.Context, events <-chan fsnotify.Event, errs <-chan error) error {
	w.scan(ctx, true)
	due := map[string]time.Time{}
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	arm := func() {
		var next time.Time
		for _, t := range due {
			if next.IsZero() || t.Before(next) {
				next = t
			}
		}
		if !next.IsZero() {
			timer.Reset(time.Until(next))
		}
	}
	for {
		if err := w.writeErr(); err != nil {
			return w.stop(fmt.Errorf("writing output: %w", err))
		}
		select {
		case <-ctx.Done():
			return w.stop(nil)
		case ev, ok := <-events:
			if !ok {
				return w.stop(errors.New("watching stopped: the file event channel was closed"))
			}
			key, ok := w.route(ev)
			if !ok {
				continue
			}
			if key == w.abs.lock {
				// Look at once: a short run may take and leave the lock
				// within one debounce interval.
				w.noteRunHolder()
			}
			due[key] = time.Now().Add(w.o.Debounce)
			arm()
		case err, ok := <-errs:
			if !ok {
				return w.stop(errors.New("watching stopped: the file error channel was closed"))
			}
			if errors.Is(err, fsnotify.ErrEventOverflow) {
				w.printf("too many changes at once: checking every file again")
				due[keyRescan] = time.Now()
				arm()
				continue
			}
			w.printf("watching %s: %v", w.o.Dir, err)
		case <-timer.C:
			now, fire := time.Now(), false
			for k, t := range due {
				if !t.After(now) {
					delete(due, k)
					fire = true
				}
			}
			if fire {
				w.scan(ctx, true)
			}
			arm()
		case err := <-w.done:
			w.finished(err)
			// The run's own writes are not a reason for another run.
			w.scan(ctx, false)
		}
	}
}

// stop waits for a run under way to return, then returns err.
func (w *watcher) stop(err error) error {
	if w.running {
		w.finished(<-w.done)
	}
	return err
}

func (w *watcher) finished(err error) {
	w.running, w.runSeen, w.runOwner = false, false, statefile.Owner{}
	if err != nil {
		w.printf("run finished: %v", err)
		return
	}
	w.printf("run finished: ok")
}

// noteRunHolder records that a run holds the lock, if one does.
func (w *watcher) noteRunHolder() (statefile.Owner, bool) {
	o, held, err := statefile.RunHolder(w.abs.dir)
	if err != nil || !held {
		return o, false
	}
	w.runSeen = true
	if o.PID != 0 {
		// A holder that is leaving blanks its line before it unlocks.
		w.runOwner = o
	}
	return o, true
}

// anotherRun describes the holder of the run lock for a message.
func anotherRun(o statefile.Owner, withStart bool) string {
	switch {
	case o.PID == 0:
		return "another run"
	case withStart:
		return fmt.Sprintf("another run (pid %d, started %s)", o.PID, o.Since.Local().Format("15:04:05"))
	}
	return fmt.Sprintf("another run (pid %d)", o.PID)
}

// scan brings the directory's watches up to date, lints if any file's
// content changed since the last lint, reports auto-retry being disabled or
// enabled, and with mayStart starts a run if one is due.
func (w *watcher) scan(ctx context.Context, mayStart bool) {
	if !w.ensureDir() {
		return
	}
	snap := w.snapshot()
	changed := snap.digest != w.last
	if changed {
		w.lastLint = w.lint(snap)
		w.last = snap.digest
	}
	res := w.lastLint
	reason := ""
	switch {
	case fileExists(w.abs.sentinel):
		reason = issuequeue.SentinelFile + " exists"
	case res.state != nil && !res.state.AutoRetryEnabled:
		reason = issuequeue.StateAutoRetryEnabled + " is false in " + w.paths.State()
	}
	enabledAgain := false
	if reason != w.disabled {
		if reason != "" {
			w.printf("auto-retry disabled: %s", reason)
		} else {
			w.printf("auto-retry enabled again")
			enabledAgain = true
		}
		w.disabled = reason
	}
	if w.o.OnPending == nil || w.running {
		return
	}
	owner, held := w.noteRunHolder()
	if !held && w.runSeen {
		// Changes made while another run held the lock were that run's to
		// handle; what it left behind is not a new change.
		w.printf("%s has ended", anotherRun(w.runOwner, false))
		w.runSeen, w.runOwner = false, statefile.Owner{}
		return
	}
	if !mayStart || !(changed || enabledAgain) || ctx.Err() != nil {
		return
	}
	if res.invalid || reason != "" || res.pending == 0 {
		return
	}
	if held {
		if owner.PID == 0 {
			owner = w.runOwner
		}
		w.printf("not starting a run: %s holds the lock", anotherRun(owner, true))
		return
	}
	w.running = true
	w.printf("starting a run: %d issue(s) pending auto-retry", res.pending)
	go func() {
		lw := &lineWriter{w: w}
		err := w.o.OnPending(ctx, lw)
		lw.flush()
		w.done <- err
	}()
}

// ensureDir keeps the state directory and its templates watched. When the
// directory is gone it says so once and watches the parent for its return.
func (w *watcher) ensureDir() bool {
	if fi, err := os.Stat(w.abs.dir); err == nil && fi.IsDir() {
		if err := w.fw.Add(w.abs.dir); err != nil {
			w.printf("watching %s: %v", w.o.Dir, err)
			return false
		}
		if w.dirGone {
			w.dirGone = false
			if w.parentOn && w.abs.parent != w.abs.cfgDir {
				_ = w.fw.Remove(w.abs.parent)
			}
			w.parentOn = false
			w.printf("state directory %s is back", w.o.Dir)
		}
		if fi, err := os.Stat(w.abs.templates); err == nil && fi.IsDir() {
			_ = w.fw.Add(w.abs.templates) // at worst its overrides are linted at the next other change
		}
		return true
	}
	if !w.dirGone {
		w.dirGone = true
		w.last = "" // lint again, whatever comes back
		w.printf("state directory %s is gone; waiting for it to come back", w.o.Dir)
	}
	if !w.parentOn {
		if err := w.fw.Add(w.abs.parent); err != nil {
			w.printf("watching %s for the state directory: %v", w.abs.parent, err)
			return false
		}
		w.parentOn = true
		// It may have come back before the parent was watched.
		if fi, err := os.Stat(w.abs.dir); err == nil && fi.IsDir() {
			return w.ensureDir()
		}
	}
	return false
}

// printf prints one line, or one line per line of the message, stamped
// with the time of day.
func (w *watcher) printf(format string, args ...any) {
	stamp := w.o.Now().Format("15:04:05")
	var b strings.Builder
	for _, line := range strings.Split(fmt.Sprintf(format, args...), "\n") {
		b.WriteString(stamp + " " + line + "\n")
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.outErr != nil {
		return
	}
	if _, err := io.WriteString(w.o.Out, b.String()); err != nil {
		w.outErr = err
	}
}

// writeErr returns the first error writing to Out, from Watch or a run.
func (w *watcher) writeErr() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.outErr
}

func fileExists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}

// maxPartialLine bounds what lineWriter holds back waiting for a newline
// (a progress bar that never ends its line).
const maxPartialLine = 64 << 10

// lineWriter passes a run's output on to Out in whole lines, so that they
// never interleave mid-line with Watch's own.
type lineWriter struct {
	w   *watcher
	buf []byte
}

func (l *lineWriter) Write(p []byte) (int, error) {
	l.w.mu.Lock()
	defer l.w.mu.Unlock()
	if l.w.outErr != nil {
		return 0, l.w.outErr
	}
	l.buf = append(l.buf, p...)
	n := bytes.LastIndexByte(l.buf, '\n') + 1
	if n == 0 && len(l.buf) >= maxPartialLine {
		n = len(l.buf)
	}
	if n > 0 {
		if _, err := l.w.o.Out.Write(l.buf[:n]); err != nil {
			l.w.outErr = err
			return 0, err
		}
		l.buf = append(l.buf[:0], l.buf[n:]...)
	}
	return len(p), nil
}

// flush passes on a last line that has no newline.
func (l *lineWriter) flush() {
	if len(l.buf) > 0 {
		_, _ = l.Write([]byte("\n"))
	}
}
