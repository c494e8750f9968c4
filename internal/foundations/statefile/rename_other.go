//go:build unix && !linux && !darwin

package statefile

// swap is unsupported here: Replace falls back to a plain rename.
func swap(int, string, string) error { return errUnsupported }

// renameNoReplace links from to to unless to exists (EEXIST), then unlinks
// from.
func renameNoReplace(dirfd int, from, to string) error { return linkNoReplace(dirfd, from, to) }
