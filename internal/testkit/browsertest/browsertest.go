//go:build unix

package browsertest

import (
	"context"
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"
)

// Find returns the Chromium on PATH. Without one the calling test is
// skipped, except in CI (CI set), which installs it (.ci/install-chromium)
// and must not pass without running the browser tests.
func Find(t testing.TB) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("CI") != "" {
		t.Fatal("no chromium on PATH; CI installs it with .ci/install-chromium")
	}
	t.Skip("no chromium on PATH (apt-get install chromium); browser tests skipped")
	return ""
}

// Command returns the command that opens url in browser, headless, with a
// fresh profile in a temporary directory of t and args after the flags
// every test needs. It runs in its own process group, which the end of ctx
// kills whole, helper processes included.
func Command(ctx context.Context, t testing.TB, browser, url string, args ...string) *exec.Cmd {
	all := append([]string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync", "--disable-dev-shm-usage",
		"--user-data-dir=" + t.TempDir()}, args...)
	cmd := exec.CommandContext(ctx, browser, append(all, url)...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return KillGroup(cmd) }
	cmd.WaitDelay = 5 * time.Second
	return cmd
}

// KillGroup kills with SIGKILL what is left of the process group of cmd,
// which Command started: helpers that outlive the browser.
func KillGroup(cmd *exec.Cmd) error {
	return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
}
