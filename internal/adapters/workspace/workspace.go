package workspace

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// The kinds of state.
const (
	KindGit   = "git"   // the id of the tree git would commit from the working files
	KindFiles = "files" // a content hash of the files below the root
)

// A Workspace is a directory whose files loops change, and the tool's state
// directory, which is never part of the workspace's state.
type Workspace struct {
	Root     string // the directory the loops work in
	StateDir string // the tool's state directory; also where the recordings are kept

	// Git is the git program. If empty, "git" is looked up in PATH; if it
	// cannot be found, states are recorded outside git and say why.
	Git string
}

// A State is one recording of the workspace. Two states of the same kind are
// equal exactly when the files they saw were equal.
type State struct {
	Kind string `json:"kind"` // KindGit or KindFiles
	Hex  string `json:"hex"`  // the tree id (git) or the manifest's SHA-256 (files)

	// Reason says why a files state was recorded when the root may be in a
	// git work tree (no git program, git refused the repository); empty
	// otherwise.
	Reason string `json:"reason,omitempty"`
}

// Stats is what changed between two states.
type Stats struct {
	FilesChanged int
	LinesAdded   int
	LinesRemoved int
	Files        []FileChange // sorted by path
}

// A FileChange is one file added, removed or changed between two states.
type FileChange struct {
	Path         string // slash-separated, relative to the top of the work tree (git) or the root
	LinesAdded   int
	LinesRemoved int

	// Binary is true when lines were not counted: the content is binary, or,
	// outside git, one side's content is no longer kept.
	Binary bool
}

// ErrNotKept is returned when a state's record has been removed from the
// state directory (outside git, only the most recent manifests are kept), or
// the git objects of a state cannot be found.
var ErrNotKept = errors.New("workspace: state no longer kept")

// State records the workspace's current state.
func (w *Workspace) State(ctx context.Context) (State, error) {
	if w.Root == "" || w.StateDir == "" {
		return State{}, errors.New("workspace: root and state directory are required")
	}
	g, reason, err := w.findRepo(ctx)
	if err != nil {
		return State{}, err
	}
	if g != nil {
		hex, err := g.state(ctx)
		if err != nil {
			return State{}, err
		}
		return State{Kind: KindGit, Hex: hex}, nil
	}
	hex, err := w.filesState()
	if err != nil {
		return State{}, err
	}
	return State{Kind: KindFiles, Hex: hex, Reason: reason}, nil
}

// Diff counts the files and lines changed from one recorded state to another.
func (w *Workspace) Diff(ctx context.Context, from, to State) (Stats, error) {
	if err := sameKind(from, to); err != nil {
		return Stats{}, err
	}
	if from.Hex == to.Hex {
		return Stats{}, nil
	}
	if from.Kind == KindGit {
		g, err := w.repoFor(ctx)
		if err != nil {
			return Stats{}, err
		}
		return g.diff(ctx, from.Hex, to.Hex)
	}
	return w.filesDiff(from.Hex, to.Hex)
}

// DiffText returns a unified diff from one recorded state to another: git's
// patch format in a git work tree, paths under a/ and b/ in both kinds.
// Outside git, a file whose content is binary or no longer kept is named
// without its lines.
func (w *Workspace) DiffText(ctx context.Context, from, to State) ([]byte, error) {
	if err := sameKind(from, to); err != nil {
		return nil, err
	}
	if from.Hex == to.Hex {
		return nil, nil
	}
	if from.Kind == KindGit {
		g, err := w.repoFor(ctx)
		if err != nil {
			return nil, err
		}
		return g.diffText(ctx, from.Hex, to.Hex)
	}
	return w.filesDiffText(from.Hex, to.Hex)
}

func sameKind(from, to State) error {
	switch {
	case from.Kind != to.Kind:
		return fmt.Errorf("workspace: cannot diff a %s state against a %s state", from.Kind, to.Kind)
	case from.Kind != KindGit && from.Kind != KindFiles:
		return fmt.Errorf("workspace: unknown state kind %q", from.Kind)
	case from.Hex == "" || to.Hex == "":
		return errors.New("workspace: empty state")
	}
	return nil
}

// repoFor finds the git repository for diffing git states.
func (w *Workspace) repoFor(ctx context.Context) (*repo, error) {
	g, reason, err := w.findRepo(ctx)
	if err != nil {
		return nil, err
	}
	if g == nil {
		if reason == "" {
			reason = "not in a git work tree"
		}
		return nil, fmt.Errorf("workspace: diffing git states: %s", reason)
	}
	return g, nil
}

// dir returns STATEDIR/workspace/ELEM..., the one place its layout is named.
func (w *Workspace) dir(elem ...string) string {
	return filepath.Join(append([]string{w.StateDir, "workspace"}, elem...)...)
}

// resolved returns the absolute path of dir with symbolic links resolved, or
// the cleaned absolute path if it does not exist.
func resolved(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	if r, err := filepath.EvalSymlinks(abs); err == nil {
		return r, nil
	} else if !errors.Is(err, os.ErrNotExist) {
		return "", err
	}
	return abs, nil
}
