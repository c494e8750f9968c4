package issuequeue

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/autoretry/orchestrator/internal/foundations/statefile"
)

// noLeaseHelperDir names, to the helper process of the tests below, the
// state directory it changes, and noLeaseHelperMode what it does there.
const (
	noLeaseHelperDir  = "ISSUEQUEUE_TEST_NO_LEASE_DIR"
	noLeaseHelperMode = "ISSUEQUEUE_TEST_NO_LEASE_MODE"
)

// asNobody runs the helper process in mode on dir as the user nobody, who
// can take no lease on root's files, and returns what it printed.
func asNobody(t *testing.T, dir, mode string) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("acting as another user, who cannot take a lease on the file, needs root")
	}
	nobody, err := user.Lookup("nobody")
	if err != nil {
		t.Skip(err)
	}
	uid, _ := strconv.Atoi(nobody.Uid)
	gid, _ := strconv.Atoi(nobody.Gid)
	exe, err := os.ReadFile(os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	helper := filepath.Join(dir, "helper.test")
	if err := os.WriteFile(helper, exe, 0o755); err != nil {
		t.Fatal(err)
	}
	entries, _ := os.ReadDir(dir)
	os.Chmod(dir, 0o777)
	for _, e := range entries {
		os.Chmod(filepath.Join(dir, e.Name()), 0o777)
	}
	cmd := exec.Command(helper, "-test.run=^TestNoLeaseHelperProcess$", "-test.v")
	cmd.Env = append(os.Environ(), noLeaseHelperDir+"="+dir, noLeaseHelperMode+"="+mode)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("helper: %v\n%s", err, out)
	}
	return string(out)
}

func noLeaseDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "no-lease-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	write(t, filepath.Join(dir, QueueFile), intentQueue)
	write(t, filepath.Join(dir, StateFile), intentState)
	return dir
}

// Where no lease can tell (another user's file), an editor that saves in
// place and truncates the queue after a command read it, and writes only
// after the command replaced the file, would have its save go into the
// replaced file and the queue rebuilt from the empty file: the change is
// refused instead (nothing written), and the person's save stands.
func TestNoLeaseEmptiedMidChangeIsRefused(t *testing.T) {
	dir := noLeaseDir(t)
	out := asNobody(t, dir, "queue")
	if !strings.Contains(out, "(empty file: true)") {
		t.Errorf("the change built on the emptied queue was not refused:\n%s", out)
	}
	if got := read(t, filepath.Join(dir, QueueFile)); !strings.Contains(got, "Server fails to start") || !strings.Contains(got, "edited by person") {
		t.Errorf("the queue lost the person's save:\n%s", got)
	}
}

// The same for the archive an archive writes: an emptied archive is
// refused, not rebuilt with only the moved issue.
func TestNoLeaseEmptyArchiveIsRefused(t *testing.T) {
	dir := noLeaseDir(t)
	write(t, filepath.Join(dir, ArchiveFile), ArchiveTemplate+"\n## ISSUE-20261001-001\n\nArchived by hand\n")
	out := asNobody(t, dir, "archive")
	if !strings.Contains(out, "(empty file: true)") {
		t.Errorf("the archive built on the emptied archive was not refused:\n%s", out)
	}
	if got := read(t, filepath.Join(dir, ArchiveFile)); !strings.Contains(got, "Archived by hand") {
		t.Errorf("the archive's history is gone:\n%s", got)
	}
}

// TestNoLeaseHelperProcess is the other user's process of the tests above;
// alone, it does nothing.
func TestNoLeaseHelperProcess(t *testing.T) {
	dir := os.Getenv(noLeaseHelperDir)
	if dir == "" {
		t.Skip("the helper process of the no-lease tests")
	}
	qp, ap := filepath.Join(dir, QueueFile), filepath.Join(dir, ArchiveFile)
	if _, whole, _ := statefile.Read(t.Context(), qp, 0); whole {
		t.Fatal("this process can take a lease on the queue: the test does not reach the case it is for")
	}
	var err error
	switch os.Getenv(noLeaseHelperMode) {
	case "empty": // the queue is empty already
		s := &Store{Paths: Paths{Dir: dir}, Command: "add"}
		err = s.Update(t.Context(), func(q *Queue, st *State) (Change, error) {
			return Change{Queue: []Edit{AppendIssue("ISSUE-20261126-009", "## ISSUE-20261126-009\n\n| Field | Value |\n|-------|-------|\n| Status | pending |\n")}}, nil
		})
	case "archive":
		editor, oerr := os.OpenFile(ap, os.O_WRONLY|os.O_TRUNC, 0) // an editor begins its save in place
		if oerr != nil {
			t.Fatal(oerr)
		}
		s := &Store{Paths: Paths{Dir: dir}, Command: "archive"}
		err = s.Update(t.Context(), func(q *Queue, st *State) (Change, error) {
			return Change{Move: []string{"ISSUE-20261122-002"}}, nil
		})
		editor.Write([]byte(ArchiveTemplate + "\n## ISSUE-20261001-001\n\nArchived by hand\n"))
		editor.Close()
	default:
		var editor *os.File
		s := &Store{Paths: Paths{Dir: dir}, Command: "add"}
		err = s.Update(t.Context(), func(q *Queue, st *State) (Change, error) {
			// The command has read the whole queue; an editor begins its
			// save in place.
			var oerr error
			if editor == nil {
				if editor, oerr = os.OpenFile(qp, os.O_WRONLY|os.O_TRUNC, 0); oerr != nil {
					t.Fatal(oerr)
				}
			}
			return Change{Queue: []Edit{AppendIssue("ISSUE-20261126-009", "## ISSUE-20261126-009\n\n| Field | Value |\n|-------|-------|\n| Status | pending |\n")}}, nil
		})
		editor.Write([]byte(strings.Replace(intentQueue, "Flaky test", "Flaky test, edited by person", 1)))
		editor.Close()
	}
	var ee *EmptyFileError
	fmt.Printf("refused: %T %v (empty file: %v)\n", err, err, errors.As(err, &ee))
}
