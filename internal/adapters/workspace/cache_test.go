package workspace

import (
	"maps"
	"testing"
)

// The stat cache reads back what it wrote, whatever a path holds, and a
// cache that is not exactly in its format reads as no cache at all.
func TestStatCacheFormat(t *testing.T) {
	m := map[string]cacheEntry{
		"plain.go":             {Size: 12, Mtime: 1764000000123456789, Ino: 42, Mode: modeFile, Hash: "ab12", Hashed: 1764000000999},
		"with space/and\ttab":  {Size: 0, Mtime: -1, Ino: 0, Mode: modeExec, Hash: "00", Hashed: 0},
		"new\nline \"quoted\"": {Size: 1 << 40, Mtime: 5, Ino: 1<<64 - 1, Mode: modeSymlink, Hash: "ff", Hashed: 7},
		"ünïcode/ファイル.txt":     {Size: 3, Mtime: 4, Ino: 5, Mode: modeFile, Hash: "cd", Hashed: 6},
		"odd -mode- and hash ": {Size: 1, Mtime: 2, Ino: 3},
	}
	data := formatCache(m)
	got, ok := parseCache(data)
	if !ok || !maps.Equal(got, m) {
		t.Fatalf("read back %v (ok %v), wrote %v\n%s", got, ok, m, data)
	}
	if got, ok := parseCache([]byte(cacheHeader)); !ok || len(got) != 0 {
		t.Errorf("an empty cache read as %v, %v", got, ok)
	}
	for _, bad := range []string{
		"",
		"orchestrator workspace stat cache 0\n",
		string(data[:len(data)-1]), // last line cut short
		cacheHeader + "\"a\" 1 2 3 -100644 -ab\n", // a field missing
		cacheHeader + "\"a\" 1 2 3 -100644 -ab 9 extra\n",
		cacheHeader + "a 1 2 3 -100644 -ab 9\n", // unquoted path
		cacheHeader + "\"a\" x 2 3 -100644 -ab 9\n",
		"\x0e\xff\x81\x03\x01\x01\x0ccacheEntry", // the old binary encoding
	} {
		if got, ok := parseCache([]byte(bad)); ok || got != nil {
			t.Errorf("damaged cache %q read as %v", bad, got)
		}
	}
}
