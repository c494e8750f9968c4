//go:build unix

package report_test

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"image/png"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/autoretry/orchestrator/internal/testkit/browsertest"
	"github.com/autoretry/orchestrator/internal/views/report"
)

// The browser tests render the page in headless Chromium, as a person
// would see it. Set REPORT_SCREENSHOTS=DIR to keep the screenshots.

// headless runs the browser on url with args, in its own process group so
// that a timeout kills its helper processes too, and returns its stdout and
// stderr.
func headless(t *testing.T, browser, url string, args ...string) (stdout, stderr []byte) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := browsertest.Command(ctx, t, browser, url, args...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	if cmd.Process != nil {
		browsertest.KillGroup(cmd) // helpers that outlived the browser
	}
	if ctx.Err() != nil {
		t.Fatalf("%s timed out after 60s; stderr:\n%s", browser, tail(errb.Bytes()))
	}
	if err != nil {
		t.Fatalf("%s: %v; stderr:\n%s", browser, err, tail(errb.Bytes()))
	}
	return out.Bytes(), errb.Bytes()
}

func tail(b []byte) []byte {
	if len(b) > 4000 {
		return b[len(b)-4000:]
	}
	return b
}

// consoleLines returns the page's console messages that Chromium logged
// with --enable-logging=stderr: "[…:INFO:CONSOLE:1] "msg", source: …" in
// current builds, "CONSOLE(1)" in older ones. The page has no script, so
// any message is a problem (a failed load, a parse error, a policy
// violation).
func consoleLines(stderr []byte) []string {
	var out []string
	for _, l := range strings.Split(string(stderr), "\n") {
		if strings.Contains(l, ":CONSOLE:") || strings.Contains(l, ":CONSOLE(") || strings.Contains(l, "Uncaught") {
			out = append(out, l)
		}
	}
	return out
}

// writePage writes the fixture's report to a temp directory.
func writePage(t *testing.T) string {
	t.Helper()
	dir := fixtureDir(t)
	path := filepath.Join(dir, "analytics.html")
	if err := report.WriteFile(path, load(t, dir)); err != nil {
		t.Fatal(err)
	}
	return path
}

func keep(t *testing.T, png []byte, name string) {
	if dir := os.Getenv("REPORT_SCREENSHOTS"); dir != "" {
		if err := os.WriteFile(filepath.Join(dir, name), png, 0o644); err != nil {
			t.Error(err)
		}
	}
}

// TestBrowserScreenshots renders the report at a wide screen's and a
// phone's width and checks what the browser drew: the page's own header
// colour (the CSS applied), many colours (text and charts, not a blank
// page), the two bar colours of the loops chart (the SVG rendered), and no
// console message.
func TestBrowserScreenshots(t *testing.T) {
	t.Parallel()
	browser := browsertest.Find(t)
	page := writePage(t)
	for _, tc := range []struct {
		name          string
		width, height int
	}{{"wide", 1280, 2000}, {"phone", 390, 3400}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			shot := filepath.Join(t.TempDir(), "shot.png")
			_, stderr := headless(t, browser, "file://"+page, "--enable-logging=stderr", "--v=0",
				"--screenshot="+shot, fmt.Sprintf("--window-size=%d,%d", tc.width, tc.height), "--hide-scrollbars")
			if lines := consoleLines(stderr); len(lines) > 0 {
				t.Errorf("console messages:\n%s", strings.Join(lines, "\n"))
			}
			b, err := os.ReadFile(shot)
			if err != nil {
				t.Fatalf("no screenshot: %v; stderr:\n%s", err, tail(stderr))
			}
			keep(t, b, "report-"+tc.name+".png")
			img, err := png.Decode(bytes.NewReader(b))
			if err != nil {
				t.Fatal(err)
			}
			if got, want := img.Bounds().Dx(), tc.width; got != want {
				t.Errorf("screenshot %d px wide, want %d", got, want)
			}
			st := pixelStats(img)
			if st.colours < 64 {
				t.Errorf("only %d distinct colours: a blank or unstyled page", st.colours)
			}
			if frac := float64(st.notBackground) / float64(st.total); frac < 0.05 {
				t.Errorf("%.1f%% of pixels differ from the background: nearly blank", 100*frac)
			}
			if got, want := colourAt(img, 4, 4), rgb(0x1f, 0x2a, 0x44); !near(got, want) {
				t.Errorf("header pixel %v, want %v: the page's CSS was not applied", got, want)
			}
			for _, c := range []struct {
				name string
				col  [3]uint8
			}{{"regular loop bars", rgb(0x4c, 0x6e, 0xf5)}, {"auto-retry bars", rgb(0xfa, 0xb0, 0x05)}, {"ok loop squares", rgb(0x2f, 0x9e, 0x44)}} {
				if n := st.count(c.col); n < 150 {
					t.Errorf("%d pixels of the %s' colour: the chart did not render", n, c.name)
				}
			}
		})
	}
}

// TestBrowserPhoneFits loads the report into a 390 px wide frame, as on a
// phone, and measures from inside it whether anything is wider than the
// screen: wide tables and charts must scroll inside their own boxes, not
// widen the page. The measuring script lives in a test copy of the page
// (the report itself has none); it posts the widths to the outer page,
// which --dump-dom prints. The outer page also logs a console error on
// purpose, proving that consoleLines sees console messages in this
// browser build.
func TestBrowserPhoneFits(t *testing.T) {
	t.Parallel()
	browser := browsertest.Find(t)
	page := writePage(t)
	b, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	probe := `<script>var d = document.documentElement;
parent.postMessage("scroll=" + d.scrollWidth + " client=" + d.clientWidth + " inner=" + innerWidth, "*");</script></body>`
	dir := filepath.Dir(page)
	write(t, filepath.Join(dir, "probe.html"), strings.Replace(string(b), "</body>", probe, 1))
	write(t, filepath.Join(dir, "frame.html"), `<!DOCTYPE html><html><body style="margin:0"><pre id="out">no message</pre>
<iframe src="probe.html" style="width:390px;height:1000px;border:0"></iframe>
<script>console.error("console-check-marker");
addEventListener("message", function (e) { document.getElementById("out").textContent = "probe " + e.data; });</script>
</body></html>`)
	dom, stderr := headless(t, browser, "file://"+filepath.Join(dir, "frame.html"), "--enable-logging=stderr", "--v=0",
		"--virtual-time-budget=5000", "--dump-dom", "--window-size=800,1100")
	m := regexp.MustCompile(`probe scroll=(\d+) client=(\d+) inner=(\d+)`).FindSubmatch(dom)
	if m == nil {
		t.Fatalf("no measurement in the DOM:\n%s\nstderr:\n%s", tail(dom), tail(stderr))
	}
	scroll, _ := strconv.Atoi(string(m[1]))
	client, _ := strconv.Atoi(string(m[2]))
	inner, _ := strconv.Atoi(string(m[3]))
	if inner != 390 {
		t.Errorf("frame is %d px wide, want 390", inner)
	}
	if scroll > client {
		t.Errorf("page is %d px wide on a %d px screen: something overflows instead of scrolling in its box", scroll, client)
	}
	lines := consoleLines(stderr)
	var marker bool
	for _, l := range lines {
		if strings.Contains(l, "console-check-marker") {
			marker = true
		} else {
			t.Errorf("console message: %s", l)
		}
	}
	if !marker {
		t.Errorf("the deliberate console error was not logged: console checking does not work with this browser; stderr:\n%s", tail(stderr))
	}
}

type stats struct {
	colours, total, notBackground int
	hist                          map[[3]uint8]int
}

func rgb(r, g, b uint8) [3]uint8 { return [3]uint8{r, g, b} }

func colourAt(img image.Image, x, y int) [3]uint8 {
	r, g, b, _ := img.At(x, y).RGBA()
	return [3]uint8{uint8(r >> 8), uint8(g >> 8), uint8(b >> 8)}
}

func pixelStats(img image.Image) stats {
	s := stats{hist: map[[3]uint8]int{}}
	bd := img.Bounds()
	for y := bd.Min.Y; y < bd.Max.Y; y++ {
		for x := bd.Min.X; x < bd.Max.X; x++ {
			s.hist[colourAt(img, x, y)]++
			s.total++
		}
	}
	bg := 0
	for _, n := range s.hist {
		bg = max(bg, n)
	}
	s.colours, s.notBackground = len(s.hist), s.total-bg
	return s
}

// count returns the pixels within a small distance of c (colour management
// may shift a channel by a unit or two).
func (s stats) count(c [3]uint8) int {
	n := 0
	for col, k := range s.hist {
		if near(col, c) {
			n += k
		}
	}
	return n
}

func near(a, b [3]uint8) bool {
	for i := range a {
		d := int(a[i]) - int(b[i])
		if d < -3 || d > 3 {
			return false
		}
	}
	return true
}
