package workspace

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"
)

// repo is a git work tree found for a Workspace, with the environment that
// points git at the private index and object directory.
type repo struct {
	git     string
	top     string   // the top of the work tree
	exclude string   // the state directory relative to top, slash-separated; "" if outside
	index   string   // the private index, a stat cache
	tree    string   // the file that holds the key of the index's entries and the id of their tree
	objects string   // the private object directory
	env     []string // git's environment, without GIT_INDEX_FILE
}

// safety is passed to every git command: no file system monitor or split
// index (both keep files in the repository's git directory), no automatic
// maintenance, no advice on stderr.
var safety = []string{
	"-c", "core.fsmonitor=false",
	"-c", "core.splitIndex=false",
	"-c", "gc.auto=0",
	"-c", "maintenance.auto=false",
	"-c", "advice.addEmbeddedRepo=false",
}

// findRepo returns the git work tree holding w.Root, or nil and, when the
// root may be in one that cannot be used, the reason.
func (w *Workspace) findRepo(ctx context.Context) (*repo, string, error) {
	git := w.Git
	if git == "" {
		git = "git"
	}
	path, err := exec.LookPath(git)
	if err != nil {
		return nil, fmt.Sprintf("no git program (%v)", err), nil
	}
	root, err := resolved(w.Root)
	if err != nil {
		return nil, "", fmt.Errorf("workspace: %w", err)
	}
	if !dotGitAbove(root) {
		// Git finds a work tree by a .git entry in the root or above it
		// (the variables that could say otherwise are dropped): without
		// one there is no work tree, and no git process is started.
		return nil, "", nil
	}
	env := gitEnv(os.Environ())
	key := sha256.Sum256([]byte(root))
	found := w.dir("git", "found-"+hex.EncodeToString(key[:8]))
	if lines, ok := foundBefore(found, root); ok {
		return w.newRepo(path, root, env, lines)
	}
	out, stderr, err := runGit(ctx, path, root, env, nil,
		"rev-parse", "--is-inside-work-tree", "--absolute-git-dir", "--git-common-dir", "--show-toplevel")
	if err != nil {
		if ctx.Err() != nil {
			return nil, "", ctx.Err()
		}
		var exit *exec.ExitError
		if !errors.As(err, &exit) {
			return nil, fmt.Sprintf("cannot run git (%v)", err), nil
		}
		if strings.Contains(stderr, "not a git repository") {
			return nil, "", nil
		}
		return nil, "git: " + firstLine(stderr), nil
	}
	lines := strings.Split(strings.TrimRight(string(out), "\n"), "\n")
	if len(lines) < 4 || lines[0] != "true" {
		return nil, "the root is inside a git directory, not a work tree", nil
	}
	if !filepath.IsAbs(lines[2]) {
		lines[2] = filepath.Join(root, lines[2])
	}
	lines = lines[1:4]
	if err := os.MkdirAll(filepath.Dir(found), 0o755); err == nil {
		writeAtomic(found, []byte(strings.Join(lines, "\n")+"\n")) // only spares a rev-parse next time
	}
	return w.newRepo(path, root, env, lines)
}

// dotGitAbove reports whether dir or a directory above it holds a .git
// entry (a directory, or the file of a linked worktree or submodule).
func dotGitAbove(dir string) bool {
	for {
		if _, err := os.Lstat(filepath.Join(dir, ".git")); err == nil {
			return true
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return false
		}
		dir = parent
	}
}

// foundBefore returns the git directory, common directory and top of the
// work tree that git found for root last time, if they still hold: the same
// directories exist and no .git has appeared between root and the top (git
// would stop at it).
func foundBefore(found, root string) ([]string, bool) {
	data, err := os.ReadFile(found)
	if err != nil {
		return nil, false
	}
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	if len(lines) != 3 {
		return nil, false
	}
	gitDir, common, top := lines[0], lines[1], lines[2]
	for _, d := range []string{gitDir, filepath.Join(common, "objects"), filepath.Join(top, ".git")} {
		if _, err := os.Stat(d); err != nil {
			return nil, false
		}
	}
	rel, err := filepath.Rel(top, root)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return nil, false
	}
	for dir := root; dir != top; dir = filepath.Dir(dir) {
		if _, err := os.Lstat(filepath.Join(dir, ".git")); err == nil || dir == filepath.Dir(dir) {
			return nil, false
		}
	}
	return lines, true
}

// newRepo makes the repo for the git directory, common directory and top
// of the work tree git found for root.
func (w *Workspace) newRepo(path, root string, env, lines []string) (*repo, string, error) {
	gitDir, common, top := lines[0], lines[1], lines[2]
	state, err := resolved(w.StateDir)
	if err != nil {
		return nil, "", fmt.Errorf("workspace: %w", err)
	}
	r := &repo{git: path, top: top}
	if rel, err := filepath.Rel(top, state); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		if rel == "." {
			return nil, "", fmt.Errorf("workspace: the state directory %s is the top of the work tree", w.StateDir)
		}
		r.exclude = filepath.ToSlash(rel)
	}
	key := sha256.Sum256([]byte(top))
	r.index = w.dir("git", "index-"+hex.EncodeToString(key[:8]))
	r.tree = w.dir("git", "tree-"+hex.EncodeToString(key[:8]))
	r.objects = w.dir("git", "objects")
	r.env = append(env,
		"GIT_DIR="+gitDir,
		"GIT_WORK_TREE="+top,
		"GIT_OBJECT_DIRECTORY="+r.objects,
		"GIT_ALTERNATE_OBJECT_DIRECTORIES="+filepath.Join(common, "objects"),
	)
	return r, "", nil
}

// gitEnv returns environ without the variables that point git at another
// repository, index or object store, plus the ones every command here runs
// with: no optional locks, no replace refs, no prompts, messages in English
// (they are matched).
func gitEnv(environ []string) []string {
	env := make([]string, 0, len(environ)+8)
	for _, kv := range environ {
		name, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(name, "GIT_") && !strings.HasPrefix(name, "GIT_CONFIG_") && name != "GIT_EXEC_PATH" ||
			name == "GIT_CONFIG_PARAMETERS" || name == "LC_ALL" || name == "LANGUAGE" {
			continue
		}
		env = append(env, kv)
	}
	return append(env, "GIT_OPTIONAL_LOCKS=0", "GIT_NO_REPLACE_OBJECTS=1", "GIT_TERMINAL_PROMPT=0", "LC_ALL=C", "LANGUAGE=C")
}

// state returns the id of the tree "git add -A" would stage, the state
// directory left out, computed against a copy of the private index that
// then replaces it.
func (r *repo) state(ctx context.Context) (string, error) {
	if _, err := os.Stat(r.objects); err != nil {
		// The index and the last tree name objects that are gone: start
		// afresh, every file hashed again.
		os.Remove(r.index)
		os.Remove(r.tree)
	}
	if err := os.MkdirAll(r.objects, 0o755); err != nil {
		return "", fmt.Errorf("workspace: %w", err)
	}
	removeStale(filepath.Dir(r.index), time.Now().Add(-time.Hour))
	tmp := fmt.Sprintf("%s.%d-%d.tmp", r.index, os.Getpid(), time.Now().UnixNano())
	defer os.Remove(tmp)
	// git replaces an index by renaming a new file over it, never writes it
	// in place, so a hard link is as good as a copy.
	if err := os.Link(r.index, tmp); err != nil && !errors.Is(err, os.ErrNotExist) {
		if err := copyFile(r.index, tmp); err != nil && !errors.Is(err, os.ErrNotExist) {
			return "", fmt.Errorf("workspace: %w", err)
		}
	}
	env := append(r.env[:len(r.env):len(r.env)], "GIT_INDEX_FILE="+tmp)
	args := []string{"add", "--all", "--ignore-errors", "--", ":/"}
	if r.exclude != "" {
		args = append(args, ":(exclude,literal)"+r.exclude)
	}
	if _, stderr, err := runGit(ctx, r.git, r.top, env, nil, args...); err != nil && !onlyUncheckedOut(err, stderr) {
		return "", gitError("git add", err, stderr)
	}
	if tree, ok, err := r.treeOf(tmp); err != nil || ok {
		return tree, err
	}
	out, stderr, err := runGit(ctx, r.git, r.top, env, nil, "write-tree")
	if err != nil {
		return "", gitError("git write-tree", err, stderr)
	}
	tree := strings.TrimSpace(string(out))
	entries, keyErr := readIndex(tmp, len(tree)/2)
	mark := indexMark(tmp)
	if err := os.Rename(tmp, r.index); err != nil {
		return "", fmt.Errorf("workspace: %w", err)
	}
	if keyErr == nil {
		r.noteTree(entriesKey(entries), tree, mark) // tells treeOf the hash size, and the tree if nothing changes
	}
	return tree, nil
}

// treeOf returns the tree of the index file index that "git add" left, and
// puts the index in place, without starting "git write-tree" when it can:
// when the index's entries are those whose tree the last recording wrote
// (the same file, by its mark, is not even read; see entriesKey), or else
// by writing the tree itself (see writeTree). ok
// is false when "git write-tree" is needed: nothing is known of the last
// recording, or the index holds what writeTree leaves to git.
func (r *repo) treeOf(index string) (tree string, ok bool, err error) {
	last, lastTree, lastMark := r.lastTree()
	if lastTree == "" {
		return "", false, nil
	}
	mark := indexMark(index)
	key := last
	if mark == "" || mark != lastMark {
		// git add rewrote the index: read its entries.
		entries, err := readIndex(index, len(lastTree)/2)
		if err != nil {
			return "", false, nil
		}
		key = entriesKey(entries)
		if key != last {
			if tree, ok, err = writeTree(r.objects, entries); err != nil || !ok {
				return "", false, err
			}
		}
	}
	if key == last {
		// "git add" at most refreshed the entries' stat data.
		tree = lastTree
	}
	if err := os.Rename(index, r.index); err != nil {
		return "", false, fmt.Errorf("workspace: %w", err)
	}
	if key != last || mark != lastMark {
		r.noteTree(key, tree, mark)
	}
	return tree, true, nil
}

// noteTree notes, for the next recording, the key of the entries of the
// index just put in place, their tree's id and the index file's mark.
func (r *repo) noteTree(key, tree, mark string) {
	writeAtomic(r.tree, []byte(key+" "+tree+" "+mark+"\n")) // only spares work next time
}

// lastTree returns what noteTree noted last; "" if not known.
func (r *repo) lastTree() (key, tree, mark string) {
	data, err := os.ReadFile(r.tree)
	if err != nil {
		return "", "", ""
	}
	f := strings.Fields(string(data))
	if len(f) < 2 || len(f[0]) != 2*sha256.Size || (len(f[1]) != 40 && len(f[1]) != 64) {
		return "", "", ""
	}
	if len(f) > 2 {
		mark = f[2]
	}
	return f[0], f[1], mark
}

// indexMark identifies the content of the index file at path by its size
// and its last 32 bytes, which end in the checksum git writes over the rest
// of the file: two index files with the same mark have the same entries.
// "" if the file cannot be read or has no checksum (index.skipHash writes
// zeros in its place).
func indexMark(path string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || fi.Size() < 64 {
		return ""
	}
	tail := make([]byte, 32)
	if _, err := f.ReadAt(tail, fi.Size()-32); err != nil {
		return ""
	}
	if bytes.Count(tail[12:], []byte{0}) == 20 {
		return ""
	}
	return strconv.FormatInt(fi.Size(), 10) + "-" + hex.EncodeToString(tail)
}

// onlyUncheckedOut reports whether "git add --ignore-errors" failed only on
// nested repositories with no commit checked out, which are left out.
func onlyUncheckedOut(err error, stderr string) bool {
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 1 {
		return false
	}
	seen := false
	for _, line := range strings.Split(stderr, "\n") {
		switch {
		case strings.HasPrefix(line, "error: ") && strings.HasSuffix(line, "does not have a commit checked out"):
			seen = true
		case strings.HasPrefix(line, "error: ") || strings.HasPrefix(line, "fatal: "):
			return false
		}
	}
	return seen
}

// kept reports ErrNotKept when the private object directory is gone:
// git would take it for a repository that is not one.
func (r *repo) kept() error {
	if _, err := os.Stat(r.objects); err != nil {
		return fmt.Errorf("%w: %v", ErrNotKept, err)
	}
	return nil
}

func (r *repo) diff(ctx context.Context, from, to string) (Stats, error) {
	if err := r.kept(); err != nil {
		return Stats{}, err
	}
	out, stderr, err := runGit(ctx, r.git, r.top, r.env, nil,
		"diff-tree", "-r", "-z", "--numstat", "--no-renames", "--no-textconv", "--no-ext-diff", from, to)
	if err != nil {
		return Stats{}, gitError("git diff-tree", err, stderr)
	}
	var st Stats
	for rec := range strings.SplitSeq(strings.TrimSuffix(string(out), "\x00"), "\x00") {
		if rec == "" {
			continue
		}
		added, rest, ok1 := strings.Cut(rec, "\t")
		removed, path, ok2 := strings.Cut(rest, "\t")
		if !ok1 || !ok2 {
			return Stats{}, fmt.Errorf("workspace: unexpected git diff-tree output %q", rec)
		}
		fc := FileChange{Path: path}
		if added == "-" {
			fc.Binary = true
		} else {
			a, err1 := strconv.Atoi(added)
			d, err2 := strconv.Atoi(removed)
			if err1 != nil || err2 != nil {
				return Stats{}, fmt.Errorf("workspace: unexpected git diff-tree output %q", rec)
			}
			fc.LinesAdded, fc.LinesRemoved = a, d
		}
		st.add(fc)
	}
	sort.Slice(st.Files, func(i, j int) bool { return st.Files[i].Path < st.Files[j].Path })
	return st, nil
}

func (r *repo) diffText(ctx context.Context, from, to string) ([]byte, error) {
	if err := r.kept(); err != nil {
		return nil, err
	}
	out, stderr, err := runGit(ctx, r.git, r.top, r.env, nil,
		"diff-tree", "-r", "-p", "--no-renames", "--no-textconv", "--no-ext-diff", "--no-color", from, to)
	if err != nil {
		return nil, gitError("git diff-tree", err, stderr)
	}
	return out, nil
}

func (st *Stats) add(fc FileChange) {
	st.FilesChanged++
	st.LinesAdded += fc.LinesAdded
	st.LinesRemoved += fc.LinesRemoved
	st.Files = append(st.Files, fc)
}

func runGit(ctx context.Context, git, dir string, env []string, stdin io.Reader, args ...string) ([]byte, string, error) {
	cmd := exec.CommandContext(ctx, git, append(safety[:len(safety):len(safety)], args...)...)
	cmd.Dir = dir
	cmd.Env = env
	cmd.Stdin = stdin
	var stdout, stderr bytes.Buffer
	cmd.Stdout = &stdout
	cmd.Stderr = &stderr
	err := cmd.Run()
	return stdout.Bytes(), stderr.String(), err
}

// gitError words a failed git command; a missing object means a state whose
// objects are gone.
func gitError(what string, err error, stderr string) error {
	msg := firstLine(stderr)
	if strings.Contains(stderr, "bad object") || strings.Contains(stderr, "not a tree object") || strings.Contains(stderr, "unable to read tree") {
		return fmt.Errorf("%w: %s", ErrNotKept, msg)
	}
	if msg == "" {
		return fmt.Errorf("workspace: %s: %w", what, err)
	}
	return fmt.Errorf("workspace: %s: %w: %s", what, err, msg)
}

// firstLine returns the first line of s that says something, preferring an
// error over a warning.
func firstLine(s string) string {
	var first string
	for _, line := range strings.Split(s, "\n") {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		if strings.HasPrefix(line, "fatal: ") || strings.HasPrefix(line, "error: ") {
			return line
		}
		if first == "" {
			first = line
		}
	}
	return first
}

// removeStale removes the index copies of recordings that were killed,
// telling their age by the time in their names (a hard-linked copy keeps the
// index's modification time).
func removeStale(dir string, before time.Time) {
	names, _ := filepath.Glob(filepath.Join(dir, "index-*.tmp*"))
	for _, name := range names {
		stem, _, _ := strings.Cut(filepath.Base(name), ".tmp")
		_, nanos, _ := strings.Cut(stem[strings.LastIndexByte(stem, '.')+1:], "-")
		if n, err := strconv.ParseInt(nanos, 10, 64); err == nil && time.Unix(0, n).Before(before) {
			os.Remove(name)
		}
	}
}

func copyFile(from, to string) error {
	data, err := os.ReadFile(from)
	if err != nil {
		return err
	}
	return os.WriteFile(to, data, 0o644)
}
