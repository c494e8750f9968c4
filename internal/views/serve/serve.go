// Package serve is a read-only web view of one or many state directories:
// a page per fleet and per repository (issues, the current loop, the day's
// budgets, recent stops), kept up to date in the browser by server-sent
// events sent when a state file changes. It never writes a state file and
// takes no lock; every asset is in the page.
package serve

import (
	"bufio"
	"bytes"
	"context"
	"crypto/subtle"
	_ "embed"
	"fmt"
	"html/template"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/autoretry/orchestrator/internal/foundations/statefile"
	"github.com/autoretry/orchestrator/internal/views/fleet"
	"github.com/autoretry/orchestrator/orchestrator"
)

// Server serves the pages of Dirs, the state directories, named Names for
// people.
type Server struct {
	Names, Dirs []string
	// Token, if not empty, must come with every request: as
	// "Authorization: Bearer TOKEN" or as ?token=TOKEN (which the pages
	// pass on to their links and their event stream).
	Token string
	// Now returns the current time; nil means time.Now.
	Now func() time.Time
	// Settle is how long changes are gathered before one event is sent;
	// zero means 100ms.
	Settle time.Duration
	// Self is the command as a person invokes it, for the hints; empty
	// means "orchestrator".
	Self string

	mu      sync.Mutex
	version int
	subs    map[chan int]bool
	// onSubscribe, if set, is called when an event stream opens (tests).
	onSubscribe func()
}

func (s *Server) self() string {
	if s.Self == "" {
		return "orchestrator"
	}
	return s.Self
}

func (s *Server) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}

// Handler returns the server's routes: / (the fleet, or the one
// repository), /repo/N (the Nth directory, from 1), /events (the event
// stream).
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/", s.page)
	mux.HandleFunc("/events", s.events)
	return s.guard(mux)
}

// guard refuses every method but GET and HEAD (405) and, with a token,
// every request without it (401).
func (s *Server) guard(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "read-only: only GET and HEAD", http.StatusMethodNotAllowed)
			return
		}
		if s.Token != "" {
			got := r.URL.Query().Get("token")
			if b, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); ok {
				got = b
			}
			if subtle.ConstantTimeCompare([]byte(got), []byte(s.Token)) != 1 {
				w.Header().Set("WWW-Authenticate", `Bearer realm="orchestrator"`)
				http.Error(w, "a token is needed", http.StatusUnauthorized)
				return
			}
		}
		w.Header().Set("Content-Security-Policy", "default-src 'self'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; connect-src 'self'")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		h.ServeHTTP(w, r)
	})
}

// Watch starts sending an event to every open stream when a file of a
// state directory changes, until ctx is done. The directories are watched
// when it returns.
func (s *Server) Watch(ctx context.Context) error {
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return err
	}
	for _, d := range s.Dirs {
		for _, sub := range []string{"", "logs", filepath.Join("logs", "loops")} {
			// A directory that does not exist yet is not watched; the
			// pages still read it at every load.
			_ = w.Add(filepath.Join(d, sub))
		}
	}
	settle := s.Settle
	if settle <= 0 {
		settle = 100 * time.Millisecond
	}
	go func() {
		defer w.Close()
		var fire <-chan time.Time
		for {
			select {
			case <-ctx.Done():
				return
			case _, ok := <-w.Events:
				if !ok {
					return
				}
				if fire == nil {
					fire = time.After(settle)
				}
			case _, ok := <-w.Errors:
				if !ok {
					return
				}
				// An overflow: the next change still fires.
			case <-fire:
				fire = nil
				s.publish()
			}
		}
	}()
	return nil
}

func (s *Server) publish() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.version++
	for c := range s.subs {
		select {
		case c <- s.version:
		default: // a slow reader gets the next one
		}
	}
}

func (s *Server) subscribe() (chan int, func()) {
	c := make(chan int, 1)
	s.mu.Lock()
	if s.subs == nil {
		s.subs = map[chan int]bool{}
	}
	s.subs[c] = true
	hook := s.onSubscribe
	s.mu.Unlock()
	if hook != nil {
		hook()
	}
	return c, func() {
		s.mu.Lock()
		delete(s.subs, c)
		s.mu.Unlock()
	}
}

// events is the stream of changes: one "change" event each time the
// state files change, and a comment every 15 s to keep it open.
func (s *Server) events(w http.ResponseWriter, r *http.Request) {
	fl, ok := w.(http.Flusher)
	if !ok {
		http.Error(w, "streaming unsupported", http.StatusInternalServerError)
		return
	}
	c, done := s.subscribe()
	defer done()
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-store")
	fmt.Fprint(w, "retry: 1000\n: connected\n\n")
	fl.Flush()
	keep := time.NewTicker(15 * time.Second)
	defer keep.Stop()
	for {
		select {
		case <-r.Context().Done():
			return
		case v := <-c:
			fmt.Fprintf(w, "event: change\ndata: %d\n\n", v)
			fl.Flush()
		case <-keep.C:
			fmt.Fprint(w, ": keep-alive\n\n")
			fl.Flush()
		}
	}
}

//go:embed page.html.tmpl
var pageText string

// page is parsed the first time a page is served, not when the program
// starts, which every command would pay.
var page = sync.OnceValue(func() *template.Template {
	return template.Must(template.New("page").Funcs(template.FuncMap{
		"clock": func(t time.Time) string {
			if t.IsZero() {
				return "—"
			}
			return t.UTC().Format("2006-01-02 15:04:05Z")
		},
	}).Parse(pageText))
})

// view is what the page template gets.
type view struct {
	Title     string
	Token     string
	Fleet     []fleetRow // the fleet page
	Repo      *repoView  // a repository's page
	Generated string
	Back      bool
}

type fleetRow struct {
	Link, Name, Mark, Class string
	Lines                   []string
}

type repoView struct {
	Name, Dir  string
	Entry      fleet.Entry
	Issues     []issueRow
	Stops      []stopRow
	LoopTail   string
	LoopName   string
	Budgets    []budgetRow
	SharedDir  string
	SharedRows []budgetRow
}

type issueRow struct{ ID, Summary, Status, Priority, Mark string }

type stopRow struct {
	At           time.Time
	Code, Reason string
	Run          string
}

type budgetRow struct {
	Key, Used, Limit string
	Spent            bool
}

func (s *Server) page(w http.ResponseWriter, r *http.Request) {
	v := view{Token: s.Token, Generated: s.now().UTC().Format(time.RFC3339)}
	switch {
	case r.URL.Path == "/" && len(s.Dirs) == 1:
		v.Repo = s.repo(0)
	case r.URL.Path == "/":
		v.Title = "orchestrator fleet"
		es := fleet.ReadAll(s.Names, s.Dirs, s.now(), s.self())
		index := map[string]int{}
		for i, d := range s.Dirs {
			index[d] = i
		}
		for _, e := range es {
			row := fleetRow{Link: "/repo/" + strconv.Itoa(index[e.Dir]+1), Name: e.Name}
			row.Mark, row.Class = e.PageMark("attention")
			row.Lines = e.PageLines()
			v.Fleet = append(v.Fleet, row)
		}
	case strings.HasPrefix(r.URL.Path, "/repo/"):
		n, err := strconv.Atoi(strings.TrimPrefix(r.URL.Path, "/repo/"))
		if err != nil || n < 1 || n > len(s.Dirs) {
			http.NotFound(w, r)
			return
		}
		v.Repo, v.Back = s.repo(n-1), len(s.Dirs) > 1
	default:
		http.NotFound(w, r)
		return
	}
	if v.Repo != nil {
		v.Title = "orchestrator: " + v.Repo.Name
	}
	var b bytes.Buffer
	if err := page().Execute(&b, v); err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.Write(b.Bytes())
}

// repo reads the ith repository for its page.
func (s *Server) repo(i int) *repoView {
	now := s.now()
	dir := s.Dirs[i]
	e := fleet.Read(s.Names[i], dir, now, s.self())
	rv := &repoView{Name: s.Names[i], Dir: dir, Entry: e, SharedDir: e.SharedDir}
	if q, _, err := orchestrator.PathsIn(dir).Load(); err == nil {
		person := map[string]bool{}
		for _, id := range orchestrator.NeedingPerson(q) {
			person[id] = true
		}
		for _, is := range q.Quarantined {
			rv.Issues = append(rv.Issues, issueRow{ID: is.ID, Summary: is.Summary(), Status: "quarantined", Mark: "person"})
		}
		for _, is := range q.Issues {
			row := issueRow{ID: is.ID, Summary: is.Summary(), Status: is.Status, Priority: is.Priority}
			if is.Halted {
				row.Status += " (halted)"
			}
			if person[is.ID] {
				row.Mark = "person"
			}
			rv.Issues = append(rv.Issues, row)
		}
	}
	for _, b := range e.Budgets {
		rv.Budgets = append(rv.Budgets, budgetRowOf(b.Key, b.Code, b.Used, b.Limit, b.Spent))
	}
	for _, v := range e.Shared {
		rv.SharedRows = append(rv.SharedRows, budgetRow{Key: string(v.Rule), Used: v.Value, Limit: v.Limit, Spent: v.Stop})
	}
	orchestrator.EachEvent(dir, now.Add(-24*time.Hour), func(ev orchestrator.Event) {
		if ev.Code == "" || (ev.Event != orchestrator.EvStopped && ev.Event != orchestrator.EvRunFinished && ev.Event != orchestrator.EvEscalated) {
			return
		}
		// The reason in words; logs written before reasons were codes
		// kept it in reason.
		text := ev.Error
		if text == "" || ev.Reason != string(ev.Code) {
			text = ev.Reason
		}
		rv.Stops = append(rv.Stops, stopRow{At: ev.Time, Code: string(ev.Code), Reason: text, Run: ev.RunID})
	})
	// The latest first, at most 20.
	for l, r := 0, len(rv.Stops)-1; l < r; l, r = l+1, r-1 {
		rv.Stops[l], rv.Stops[r] = rv.Stops[r], rv.Stops[l]
	}
	if len(rv.Stops) > 20 {
		rv.Stops = rv.Stops[:20]
	}
	rv.LoopName, rv.LoopTail = loopTail(orchestrator.PathsIn(dir).LoopLogs(), 40)
	return rv
}

func budgetRowOf(key string, code orchestrator.Code, used, limit float64, spent bool) budgetRow {
	f := func(x float64) string { return strconv.FormatFloat(x, 'f', -1, 64) }
	u, l := f(used), f(limit)
	switch code {
	case orchestrator.CodeDailyAgentTime:
		u, l = (time.Duration(used) * time.Second).String(), (time.Duration(limit) * time.Second).String()
	case orchestrator.CodeDailyCost:
		u, l = strconv.FormatFloat(used, 'f', 2, 64), strconv.FormatFloat(limit, 'f', 2, 64)
	}
	if limit <= 0 {
		l = "off"
	}
	return budgetRow{Key: key, Used: u, Limit: l, Spent: spent}
}

// loopTail returns the name of the latest loop output in logDir and its
// last lines.
func loopTail(logDir string, lines int) (string, string) {
	ents, err := os.ReadDir(logDir)
	if err != nil {
		return "", ""
	}
	var latest os.DirEntry
	var latestAt time.Time
	for _, de := range ents {
		if !strings.HasSuffix(de.Name(), ".log") {
			continue
		}
		if fi, err := de.Info(); err == nil && (latest == nil || fi.ModTime().After(latestAt)) {
			latest, latestAt = de, fi.ModTime()
		}
	}
	if latest == nil {
		return "", ""
	}
	f, _, err := statefile.OpenThrough(filepath.Join(logDir, latest.Name()))
	if err != nil {
		return latest.Name(), ""
	}
	defer f.Close()
	var keep []string
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		keep = append(keep, sc.Text())
		if len(keep) > lines {
			keep = keep[1:]
		}
	}
	return strings.TrimSuffix(latest.Name(), ".log"), strings.Join(keep, "\n")
}
