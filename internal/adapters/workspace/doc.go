// Package workspace records what a loop did to the files it works on.
//
// Before and after every loop the caller records the workspace's [State]: a
// hash that is equal for two recordings exactly when the files they saw were
// equal, whatever happened in between. Equal states mean a loop changed
// nothing; a state equal to one recorded earlier (an edit reverted, a commit
// reverted) means the work went round in a circle. [Workspace.Diff] counts
// the files and lines changed between two recorded states, and
// [Workspace.DiffText] shows them as a unified diff.
//
// # Inside a git work tree
//
// The state is the id of the tree git would commit from the working files:
// tracked files as they are on disk and untracked files that are not
// ignored, as "git add -A" followed by "git write-tree" computes it. The
// whole work tree counts, even when the root is a directory below its top.
// Modification times alone are not a change, because a tree id depends only
// on paths, modes and contents. The state directory is always left out: the
// tool writes it every loop, and it is often neither tracked nor ignored.
//
// Recording must not disturb the person's repository, so:
//
//   - git runs with a private index (GIT_INDEX_FILE) kept under the state
//     directory, never the repository's own. It is only a stat cache: an
//     unchanged file is not read again, which makes a recording cost about
//     what "git status" does. Each recording works on its own copy and puts
//     it in place with a rename, so a recording that is killed or runs beside
//     another leaves no lock behind.
//   - a recording runs one git process, "git add", as a rule. When the
//     index's entries (paths, modes, object ids; not the file times git
//     also keeps) are those of the last recording, its tree id is reused;
//     otherwise the tool hashes and writes the trees itself, as "git
//     write-tree" would. "git write-tree" runs on the first recording, in
//     SHA-256 repositories, and for entries it alone handles (a merge in
//     progress, intent-to-add or skip-worktree entries).
//   - the objects a recording writes (blobs of changed and untracked files,
//     trees) go to a private object directory under the state directory
//     (GIT_OBJECT_DIRECTORY), with the repository's object directory as an
//     alternate (GIT_ALTERNATE_OBJECT_DIRECTORIES), so that blobs already in
//     the repository are found there and not written again, and nothing is
//     ever added to the repository's object store.
//   - no command that writes refs, HEAD, the stash, the index or the working
//     files is run: only rev-parse, add and write-tree against the private
//     index, and diff-tree. GIT_OPTIONAL_LOCKS=0 is set, the file system
//     monitor and split index are turned off (either would keep files in the
//     repository's git directory), and variables such as GIT_DIR inherited
//     from the caller are dropped.
//
// Nested repositories are recorded as git records them, as a gitlink to
// their checked-out commit; one with no commit yet is left out. Changes
// inside a submodule's working files are not seen until its commit changes.
// A linked worktree ("git worktree add") is handled like any work tree, its
// objects found in the common git directory.
//
// The private object directory grows by the blobs of files that changed or
// are untracked, and the trees of the states, once per distinct content;
// it is never pruned, because a
// recorded state must stay diffable. Removing the directory
// (STATEDIR/workspace) costs only the diffs of states recorded before.
//
// # Outside git
//
// When the root is not in a git work tree, or no git program can be found
// (State.Reason says which), the state is a SHA-256 over a manifest of
// every file below the root: its slash-separated path, its mode (regular,
// executable, symbolic link; like git, nothing else of the mode) and the
// SHA-256 of its content, a symbolic link's content being its target text.
// The state directory and version-control metadata directories (.git, .hg,
// .svn, .bzr, .jj) are skipped; nothing else is, so build output below the
// root counts. Empty directories do not count, as in git. A stat cache
// (size, modification time, mode, inode) spares reading unchanged files.
//
// To diff such states later, the manifests of the 16 most recently recorded
// states are kept, and a content-addressed copy of every text file of at
// most 256 KiB seen while hashing, the copies bounded to 64 MiB (the oldest
// are removed first). A file whose earlier or later content is no longer
// kept, or is binary, is reported as changed with no line counts.
//
// # Layout
//
// Everything lives in STATEDIR/workspace: git/objects, git/index-* and
// git/tree-* (the last recording's entries and tree) for git, files/manifests, files/blobs and files/cache-* outside git. A
// recording made while another runs is safe; both see the files as they were.
package workspace
