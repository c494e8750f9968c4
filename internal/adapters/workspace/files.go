package workspace

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"
)

// vcsDirs are the version-control metadata directories left out of a files
// state: they change when nothing in the work does.
var vcsDirs = map[string]bool{".git": true, ".hg": true, ".svn": true, ".bzr": true, ".jj": true}

// Modes as git writes them, the only parts of a file's mode that count.
const (
	modeFile    = "100644"
	modeExec    = "100755"
	modeSymlink = "120000"
)

// racyWindow is how long after a file's modification its stat data is not
// trusted: a file changed again within the file system's timestamp
// granularity keeps its modification time.
const racyWindow = 2 * time.Second

// entry is one file of a manifest.
type entry struct {
	Path string // slash-separated, relative to the root
	Mode string // modeFile, modeExec or modeSymlink
	Hash string // hex SHA-256 of the content, or of a link's target
}

// cacheEntry is what the stat cache knows of a file.
type cacheEntry struct {
	Size, Mtime int64
	Ino         uint64
	Mode        string
	Hash        string
	Hashed      int64 // when the content was read, Unix nanoseconds
}

func (w *Workspace) filesState() (string, error) {
	root, err := resolved(w.Root)
	if err != nil {
		return "", fmt.Errorf("workspace: %w", err)
	}
	state, err := resolved(w.StateDir)
	if err != nil {
		return "", fmt.Errorf("workspace: %w", err)
	}
	st := &store{dir: w.dir("files")}
	key := sha256.Sum256([]byte(root))
	cachePath := w.dir("files", "cache-"+hex.EncodeToString(key[:8]))
	cache := loadCache(cachePath)
	fresh := make(map[string]cacheEntry, len(cache))
	now := time.Now().UnixNano()
	var entries []entry
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if path == state {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if path != root && vcsDirs[d.Name()] {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil // a linked worktree's .git file
		}
		if d.IsDir() || !d.Type().IsRegular() && d.Type()&fs.ModeSymlink == 0 {
			return nil
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		if d.Type()&fs.ModeSymlink != 0 {
			target, err := os.Readlink(path)
			if err != nil {
				return err
			}
			h, err := st.keep([]byte(target))
			if err != nil {
				return err
			}
			entries = append(entries, entry{rel, modeSymlink, h})
			return nil
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		ce := cacheEntry{Size: fi.Size(), Mtime: fi.ModTime().UnixNano(), Ino: inode(fi), Mode: modeFile}
		if fi.Mode()&0o100 != 0 {
			ce.Mode = modeExec
		}
		if old, ok := cache[rel]; ok && old.Size == ce.Size && old.Mtime == ce.Mtime && old.Ino == ce.Ino &&
			old.Mode == ce.Mode && ce.Mtime < old.Hashed-int64(racyWindow) {
			ce.Hash, ce.Hashed = old.Hash, old.Hashed
		} else {
			if ce.Hash, err = st.hashFile(path, fi.Size()); err != nil {
				return err
			}
			ce.Hashed = now
		}
		fresh[rel] = ce
		entries = append(entries, entry{rel, ce.Mode, ce.Hash})
		return nil
	})
	if err != nil {
		return "", fmt.Errorf("workspace: reading the files: %w", err)
	}
	sort.Slice(entries, func(i, j int) bool { return entries[i].Path < entries[j].Path })
	var manifest bytes.Buffer
	for _, e := range entries {
		fmt.Fprintf(&manifest, "%s %s %s\x00", e.Mode, e.Hash, e.Path)
	}
	sum := sha256.Sum256(manifest.Bytes())
	hex := hex.EncodeToString(sum[:])
	if err := st.putManifest(hex, manifest.Bytes()); err != nil {
		return "", err
	}
	if err := saveCache(cachePath, fresh); err != nil {
		return "", err
	}
	if err := st.prune(); err != nil {
		return "", err
	}
	return hex, nil
}

// The stat cache is a text file: a header line, then a line per file of
// its quoted path, size, modification time, inode, mode, content hash and
// when the content was read. (A text format of its own rather than a
// general encoder: encoding/gob registers its types when any program that
// links it starts, which every command of the binary would pay.)
const cacheHeader = "orchestrator workspace stat cache 1\n"

func loadCache(path string) map[string]cacheEntry {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	m, ok := parseCache(data)
	if !ok {
		return nil // a damaged cache only costs reading the files again
	}
	return m
}

// parseCache reads a stat cache; false if any line is not as
// formatCache writes it.
func parseCache(data []byte) (map[string]cacheEntry, bool) {
	rest, ok := bytes.CutPrefix(data, []byte(cacheHeader))
	if !ok {
		return nil, false
	}
	m := make(map[string]cacheEntry, bytes.Count(rest, []byte{'\n'}))
	for len(rest) > 0 {
		line, after, found := bytes.Cut(rest, []byte{'\n'})
		if !found {
			return nil, false
		}
		rest = after
		name, err := strconv.QuotedPrefix(string(line))
		if err != nil {
			return nil, false
		}
		rel, err := strconv.Unquote(name)
		if err != nil {
			return nil, false
		}
		f := strings.Fields(string(line[len(name):]))
		if len(f) != 6 {
			return nil, false
		}
		var ce cacheEntry
		var e1, e2, e3, e4 error
		ce.Size, e1 = strconv.ParseInt(f[0], 10, 64)
		ce.Mtime, e2 = strconv.ParseInt(f[1], 10, 64)
		ce.Ino, e3 = strconv.ParseUint(f[2], 10, 64)
		ce.Mode, ce.Hash = strings.TrimPrefix(f[3], "-"), strings.TrimPrefix(f[4], "-")
		ce.Hashed, e4 = strconv.ParseInt(f[5], 10, 64)
		if errors.Join(e1, e2, e3, e4) != nil {
			return nil, false
		}
		m[rel] = ce
	}
	return m, true
}

// formatCache writes the stat cache m, its paths sorted.
func formatCache(m map[string]cacheEntry) []byte {
	names := make([]string, 0, len(m))
	for rel := range m {
		names = append(names, rel)
	}
	sort.Strings(names)
	b := []byte(cacheHeader)
	for _, rel := range names {
		ce := m[rel]
		b = strconv.AppendQuote(b, rel)
		// A mode or hash is never empty; "-" keeps the fields apart if one were.
		b = fmt.Appendf(b, " %d %d %d -%s -%s %d\n", ce.Size, ce.Mtime, ce.Ino, ce.Mode, ce.Hash, ce.Hashed)
	}
	return b
}

func saveCache(path string, m map[string]cacheEntry) error {
	return writeAtomic(path, formatCache(m))
}

// writeAtomic writes data to path through a temporary file and a rename, so
// that a reader sees the old file or the new one, whole.
func writeAtomic(path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("workspace: %w", err)
	}
	f, err := os.CreateTemp(filepath.Dir(path), ".tmp-*")
	if err != nil {
		return fmt.Errorf("workspace: %w", err)
	}
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		os.Remove(f.Name())
		return fmt.Errorf("workspace: %w", err)
	}
	return nil
}

// filesChanges returns the entries of two manifests that differ, as pairs
// (old, new); a missing side has an empty Path.
func (w *Workspace) filesChanges(from, to string) ([][2]entry, *store, error) {
	st := &store{dir: w.dir("files")}
	a, err := st.manifest(from)
	if err != nil {
		return nil, nil, err
	}
	b, err := st.manifest(to)
	if err != nil {
		return nil, nil, err
	}
	var out [][2]entry
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		switch {
		case j == len(b) || i < len(a) && a[i].Path < b[j].Path:
			out = append(out, [2]entry{a[i], {}})
			i++
		case i == len(a) || b[j].Path < a[i].Path:
			out = append(out, [2]entry{{}, b[j]})
			j++
		default:
			if a[i] != b[j] {
				out = append(out, [2]entry{a[i], b[j]})
			}
			i++
			j++
		}
	}
	return out, st, nil
}

func (w *Workspace) filesDiff(from, to string) (Stats, error) {
	changes, st, err := w.filesChanges(from, to)
	if err != nil {
		return Stats{}, err
	}
	var stats Stats
	for _, c := range changes {
		fc := FileChange{Path: c[0].Path}
		if fc.Path == "" {
			fc.Path = c[1].Path
		}
		if c[0].Hash != c[1].Hash {
			a, okA := st.content(c[0])
			b, okB := st.content(c[1])
			if okA && okB {
				fc.LinesAdded, fc.LinesRemoved = countLines(diffLines(splitLines(a), splitLines(b)))
			} else {
				fc.Binary = true
			}
		}
		stats.add(fc)
	}
	return stats, nil
}

func (w *Workspace) filesDiffText(from, to string) ([]byte, error) {
	changes, st, err := w.filesChanges(from, to)
	if err != nil {
		return nil, err
	}
	var out bytes.Buffer
	for _, c := range changes {
		path := c[0].Path
		if path == "" {
			path = c[1].Path
		}
		fmt.Fprintf(&out, "diff --git a/%s b/%s\n", path, path)
		switch {
		case c[0].Path == "":
			fmt.Fprintf(&out, "new file mode %s\n", c[1].Mode)
		case c[1].Path == "":
			fmt.Fprintf(&out, "deleted file mode %s\n", c[0].Mode)
		case c[0].Mode != c[1].Mode:
			fmt.Fprintf(&out, "old mode %s\nnew mode %s\n", c[0].Mode, c[1].Mode)
		}
		if c[0].Hash == c[1].Hash {
			continue
		}
		a, okA := st.content(c[0])
		b, okB := st.content(c[1])
		if !okA || !okB {
			fmt.Fprintf(&out, "Binary files a/%s and b/%s differ, or their content is no longer kept\n", path, path)
			continue
		}
		fromName, toName := "a/"+path, "b/"+path
		if c[0].Path == "" {
			fromName = "/dev/null"
		}
		if c[1].Path == "" {
			toName = "/dev/null"
		}
		fmt.Fprintf(&out, "--- %s\n+++ %s\n", fromName, toName)
		writeHunks(&out, diffLines(splitLines(a), splitLines(b)))
	}
	return out.Bytes(), nil
}

// store keeps, under STATEDIR/workspace/files, the manifests of recent
// states and copies of small text files, both named by their SHA-256.
type store struct {
	dir     string
	written bool // a blob was added since the last prune
}

// Bounds of what is kept for diffs outside git.
const (
	maxBlob      = 256 << 10 // larger files are hashed, not kept
	maxBlobs     = 64 << 20  // the copies together; the oldest go first
	keptBlobs    = 48 << 20  // what pruning brings them down to
	maxManifests = 16
)

func (s *store) blobPath(hash string) string {
	return filepath.Join(s.dir, "blobs", hash[:2], hash[2:])
}

// hashFile returns the hex SHA-256 of the file's content, keeping a copy
// when it is small text.
func (s *store) hashFile(path string, size int64) (string, error) {
	if size <= maxBlob {
		data, err := os.ReadFile(path)
		if err != nil {
			return "", err
		}
		return s.keep(data)
	}
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// keep returns the hex SHA-256 of data, storing data if it is small text
// not stored yet.
func (s *store) keep(data []byte) (string, error) {
	sum := sha256.Sum256(data)
	hash := hex.EncodeToString(sum[:])
	if len(data) > maxBlob || bytes.IndexByte(data[:min(len(data), 8000)], 0) >= 0 {
		return hash, nil
	}
	p := s.blobPath(hash)
	if _, err := os.Lstat(p); err == nil {
		return hash, nil
	}
	if err := writeAtomic(p, data); err != nil {
		return "", err
	}
	s.written = true
	return hash, nil
}

// content returns the kept content of e; an absent side is empty.
func (s *store) content(e entry) ([]byte, bool) {
	if e.Path == "" {
		return nil, true
	}
	data, err := os.ReadFile(s.blobPath(e.Hash))
	return data, err == nil
}

func (s *store) putManifest(hash string, data []byte) error {
	p := filepath.Join(s.dir, "manifests", hash)
	if _, err := os.Lstat(p); err == nil {
		now := time.Now()
		os.Chtimes(p, now, now) // recorded again: among the most recent
		return nil
	}
	return writeAtomic(p, data)
}

func (s *store) manifest(hash string) ([]entry, error) {
	if len(hash) != 64 {
		return nil, fmt.Errorf("workspace: %q is not a files state", hash)
	}
	data, err := os.ReadFile(filepath.Join(s.dir, "manifests", hash))
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("%w: files state %s", ErrNotKept, hash)
	} else if err != nil {
		return nil, fmt.Errorf("workspace: %w", err)
	}
	var entries []entry
	for rec := range bytes.SplitSeq(bytes.TrimSuffix(data, []byte{0}), []byte{0}) {
		if len(rec) < 6+1+64+1 {
			return nil, fmt.Errorf("workspace: damaged manifest %s", hash)
		}
		entries = append(entries, entry{Mode: string(rec[:6]), Hash: string(rec[7:71]), Path: string(rec[72:])})
	}
	return entries, nil
}

// prune keeps the most recent manifests and, when blobs were added, bounds
// the blobs' total size.
func (s *store) prune() error {
	manifests, err := listByAge(filepath.Join(s.dir, "manifests"))
	if err != nil {
		return err
	}
	for i := 0; i < len(manifests)-maxManifests; i++ {
		os.Remove(manifests[i].path)
	}
	if !s.written {
		return nil
	}
	s.written = false
	var blobs []aged
	total := int64(0)
	dirs, _ := os.ReadDir(filepath.Join(s.dir, "blobs"))
	for _, d := range dirs {
		files, err := listByAge(filepath.Join(s.dir, "blobs", d.Name()))
		if err != nil {
			return err
		}
		for _, f := range files {
			total += f.size
		}
		blobs = append(blobs, files...)
	}
	if total <= maxBlobs {
		return nil
	}
	sort.Slice(blobs, func(i, j int) bool { return blobs[i].mtime < blobs[j].mtime })
	for _, b := range blobs {
		if total <= keptBlobs {
			break
		}
		if os.Remove(b.path) == nil {
			total -= b.size
		}
	}
	return nil
}

type aged struct {
	path        string
	size, mtime int64
}

// listByAge lists the files of dir, oldest first.
func listByAge(dir string) ([]aged, error) {
	des, err := os.ReadDir(dir)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("workspace: %w", err)
	}
	var out []aged
	for _, d := range des {
		fi, err := d.Info()
		if err != nil || !fi.Mode().IsRegular() {
			continue
		}
		out = append(out, aged{filepath.Join(dir, d.Name()), fi.Size(), fi.ModTime().UnixNano()})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].mtime < out[j].mtime })
	return out, nil
}
