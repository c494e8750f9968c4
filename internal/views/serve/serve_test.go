package serve

import (
	"bufio"
	"context"
	"crypto/sha256"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

const pendingQueue = `# Issue Queue

## ISSUE-20261122-001

| Field | Value |
|-------|-------|
| Priority | critical |
| Status | pending |
| Auto-Retry | true |
| Retry-Count | 0 |
| Max-Retries | 10 |

### Summary
Server crashes on start
`

// snapshot hashes every file under dir, to show that nothing was written.
func snapshot(t *testing.T, dir string) map[string][32]byte {
	t.Helper()
	m := map[string][32]byte{}
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		m[p] = sha256.Sum256(b)
		return nil
	})
	return m
}

func newRepo(t *testing.T, name string) string {
	t.Helper()
	d := filepath.Join(t.TempDir(), name, ".orchestrator")
	if err := os.MkdirAll(d, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(d, "issue_queue.md"), []byte(pendingQueue), 0o644); err != nil {
		t.Fatal(err)
	}
	return d
}

func get(t *testing.T, url string, header ...string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	if len(header) == 2 {
		req.Header.Set(header[0], header[1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// The server is read-only and, with a token, closed to requests without
// it: every method but GET and HEAD is refused with 405, a request
// without the token with 401, and no file of the state directories
// changes. The pages carry no asset from another host.
func TestServeReadOnlyWithToken(t *testing.T) {
	a, b := newRepo(t, "api"), newRepo(t, "web")
	before := snapshot(t, filepath.Dir(filepath.Dir(a)))
	s := &Server{Names: []string{"api", "web"}, Dirs: []string{a, b}, Token: "s3cret"}
	ts := httptest.NewServer(s.Handler())
	defer ts.Close()

	if code, _ := get(t, ts.URL+"/"); code != http.StatusUnauthorized {
		t.Errorf("without a token: %d, want 401", code)
	}
	if code, _ := get(t, ts.URL+"/?token=wrong"); code != http.StatusUnauthorized {
		t.Errorf("with a wrong token: %d, want 401", code)
	}
	code, body := get(t, ts.URL+"/", "Authorization", "Bearer s3cret")
	if code != http.StatusOK || !strings.Contains(body, `href="/repo/1?token=s3cret"`) {
		t.Fatalf("fleet page: %d\n%s", code, body)
	}
	code, body = get(t, ts.URL+"/repo/2?token=s3cret")
	if code != http.StatusOK || !strings.Contains(body, "ISSUE-20261122-001") || !strings.Contains(body, "Server crashes on start") {
		t.Fatalf("repository page: %d\n%s", code, body)
	}
	for _, page := range []string{"/", "/repo/1"} {
		_, body := get(t, ts.URL+page+"?token=s3cret")
		for _, bad := range []string{`src="http`, `href="http`, "@import", "url(http"} {
			if strings.Contains(body, bad) {
				t.Errorf("%s refers to another host: %s", page, bad)
			}
		}
	}
	for _, m := range []string{http.MethodPost, http.MethodPut, http.MethodDelete, http.MethodPatch} {
		req, _ := http.NewRequest(m, ts.URL+"/repo/1?token=s3cret", strings.NewReader("x"))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusMethodNotAllowed {
			t.Errorf("%s: %d, want 405", m, resp.StatusCode)
		}
	}
	if code, _ := get(t, ts.URL+"/repo/9?token=s3cret"); code != http.StatusNotFound {
		t.Errorf("a repository that is not served: %d", code)
	}
	after := snapshot(t, filepath.Dir(filepath.Dir(a)))
	if fmt.Sprint(before) != fmt.Sprint(after) {
		t.Errorf("serving changed the state files:\nbefore %v\nafter  %v", before, after)
	}
	after = snapshot(t, filepath.Dir(filepath.Dir(b)))
	if len(after) != 1 {
		t.Errorf("serving wrote files: %v", after)
	}
}

// A newly halted issue reaches an open page within 5 seconds without a
// reload: the event stream tells of the change, and the page it then
// fetches shows the issue halted.
func TestServeLiveHalt(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	d := newRepo(t, "api")
	s := &Server{Names: []string{"api"}, Dirs: []string{d}}
	if err := s.Watch(ctx); err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(s.Handler())
	defer ts.Close()
	_, body := get(t, ts.URL+"/")
	if strings.Contains(body, "halted") {
		t.Fatal("halted before anything happened")
	}
	if !strings.Contains(body, `new EventSource("/events"`) {
		t.Fatal("the page does not listen for changes")
	}
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, ts.URL+"/events", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("events: Content-Type %q", ct)
	}
	lines := make(chan string, 16)
	go func() {
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	for l := range lines {
		if l == ": connected" {
			break
		}
	}
	start := time.Now()
	halted := strings.Replace(strings.Replace(pendingQueue, "| Status | pending |", "| Status | escalated |", 1),
		"| Max-Retries | 10 |", "| Max-Retries | 10 |\n| Halted | true |", 1)
	if err := os.WriteFile(filepath.Join(d, "issue_queue.md"), []byte(halted), 0o644); err != nil {
		t.Fatal(err)
	}
	deadline := time.After(5 * time.Second)
	for got := false; !got; {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatal("the event stream ended")
			}
			got = l == "event: change"
		case <-deadline:
			t.Fatal("no change event within 5s")
		}
	}
	_, body = get(t, ts.URL+"/")
	if !strings.Contains(body, "escalated (halted)") || !strings.Contains(body, "1 issue(s) need a person: ISSUE-20261122-001 halted") {
		t.Fatalf("the page does not show the halted issue:\n%s", body)
	}
	t.Logf("shown after %s", time.Since(start).Round(time.Millisecond))
}
