//go:build unix

package serve

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/autoretry/orchestrator/internal/testkit/browsertest"
)

// cdp speaks the DevTools protocol with a browser over the pipe that
// --remote-debugging-pipe opens (fd 3 to the browser, fd 4 from it;
// messages end with a NUL byte).
type cdp struct {
	w      *os.File
	r      *bufio.Reader
	nextID int
}

func (c *cdp) call(session, method string, params any) (json.RawMessage, error) {
	c.nextID++
	msg := map[string]any{"id": c.nextID, "method": method, "params": params}
	if session != "" {
		msg["sessionId"] = session
	}
	b, _ := json.Marshal(msg)
	if _, err := c.w.Write(append(b, 0)); err != nil {
		return nil, err
	}
	for {
		line, err := c.r.ReadBytes(0)
		if err != nil {
			return nil, err
		}
		var resp struct {
			ID     int             `json:"id"`
			Result json.RawMessage `json:"result"`
			Error  *struct {
				Message string `json:"message"`
			} `json:"error"`
		}
		if json.Unmarshal(bytes.TrimSuffix(line, []byte{0}), &resp) != nil || resp.ID != c.nextID {
			continue // an event, or the answer to nothing we wait for
		}
		if resp.Error != nil {
			return nil, fmt.Errorf("%s: %s", method, resp.Error.Message)
		}
		return resp.Result, nil
	}
}

// In a real headless browser, an open page shows a newly halted issue
// within 5 seconds without a reload.
func TestBrowserShowsHaltLive(t *testing.T) {
	browser := browsertest.Find(t)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	d := newRepo(t, "api")
	subscribed := make(chan struct{}, 1)
	s := &Server{Names: []string{"api"}, Dirs: []string{d}, onSubscribe: func() {
		select {
		case subscribed <- struct{}{}:
		default:
		}
	}}
	if err := s.Watch(ctx); err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(s.Handler())
	defer ts.Close()

	toBrowser, inR, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	outR, fromBrowser, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd := browsertest.Command(ctx, t, browser, ts.URL+"/", "--remote-debugging-pipe")
	cmd.ExtraFiles = []*os.File{toBrowser, fromBrowser} // fd 3 and fd 4
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	toBrowser.Close()
	fromBrowser.Close()
	defer func() {
		browsertest.KillGroup(cmd)
		cmd.Wait()
	}()
	c := &cdp{w: inR, r: bufio.NewReader(outR)}

	select {
	case <-subscribed:
	case <-ctx.Done():
		t.Fatalf("the page never opened its event stream\n%s", stderr.String())
	}
	res, err := c.call("", "Target.getTargets", map[string]any{})
	if err != nil {
		t.Fatal(err)
	}
	var targets struct {
		TargetInfos []struct{ TargetID, Type, URL string } `json:"targetInfos"`
	}
	json.Unmarshal(res, &targets)
	target := ""
	for _, ti := range targets.TargetInfos {
		if ti.Type == "page" && strings.HasPrefix(ti.URL, ts.URL) {
			target = ti.TargetID
		}
	}
	if target == "" {
		t.Fatalf("no page target for %s: %s", ts.URL, res)
	}
	res, err = c.call("", "Target.attachToTarget", map[string]any{"targetId": target, "flatten": true})
	if err != nil {
		t.Fatal(err)
	}
	var att struct {
		SessionID string `json:"sessionId"`
	}
	json.Unmarshal(res, &att)
	eval := func(expr string) string {
		t.Helper()
		res, err := c.call(att.SessionID, "Runtime.evaluate", map[string]any{"expression": expr, "awaitPromise": true, "returnByValue": true})
		if err != nil {
			t.Fatal(err)
		}
		var v struct {
			Result struct {
				Value any `json:"value"`
			} `json:"result"`
		}
		json.Unmarshal(res, &v)
		return fmt.Sprint(v.Result.Value)
	}
	if got := eval(`document.getElementById("issues").innerText`); !strings.Contains(got, "pending") || strings.Contains(got, "halted") {
		t.Fatalf("before: the issues read %q", got)
	}

	halted := strings.Replace(strings.Replace(pendingQueue, "| Status | pending |", "| Status | escalated |", 1),
		"| Max-Retries | 10 |", "| Max-Retries | 10 |\n| Halted | true |", 1)
	start := time.Now()
	if err := os.WriteFile(filepath.Join(d, "issue_queue.md"), []byte(halted), 0o644); err != nil {
		t.Fatal(err)
	}
	// The page's own DOM is watched until it shows the halt, or 5 s pass.
	got := eval(`new Promise(function (resolve) {
		function shown() { var t = document.getElementById("issues"); return t && t.innerText.indexOf("halted") >= 0; }
		if (shown()) return resolve("shown");
		new MutationObserver(function () { if (shown()) resolve("shown"); }).observe(document.body, {subtree: true, childList: true, characterData: true});
		setTimeout(function () { resolve("not shown"); }, 5000);
	})`)
	if got != "shown" {
		t.Fatalf("the halted issue was not shown within 5s without a reload (%s)", got)
	}
	t.Logf("shown %s after the queue changed", time.Since(start).Round(time.Millisecond))
	if got := eval(`document.getElementById("problems").innerText`); !strings.Contains(got, "ISSUE-20261122-001 halted") {
		t.Errorf("problems after: %q", got)
	}
}
