// Package statefile locks the state directory and replaces state files safely
// while people edit the same files by hand.
//
// # Locks
//
// Both locks live on one file, <dir>/.lock, which is created when missing
// (mode 0644) and never renamed or deleted. On Linux they are
// open-file-description record locks (F_OFD_SETLK) on two different bytes:
//
//   - the run lock (byte 0), held by a run for its whole length; TryRunLock
//     never waits;
//   - the write lock (byte 1), held briefly around every change of a state
//     file; LockWrite waits for it up to a bound.
//
// The kernel drops both when the holder's last descriptor closes, so a killed
// process leaves no stale lock. They are owned by the open file description,
// not by the process: two goroutines of one process exclude each other, and
// closing some other descriptor of .lock does not drop them (as it would drop
// a classic POSIX record lock). The descriptor is close-on-exec, so commands a
// run starts do not inherit the lock.
//
// A holder records itself (pid, start time, command, run id) in a fixed
// 256-byte line of .lock, written with pwrite right after the lock is taken
// and blanked right before it is released: line 1 for the run lock, line 2
// for the write lock. RunHolder and WriteHolder report that line only while
// the lock is really held (F_OFD_GETLK), so text left by a killed holder
// means nothing. In the microseconds between taking a lock and writing the
// line, a reader sees the line blank, or after a crash the dead holder's;
// the line is for messages and for finding the run to signal, not for
// deciding who holds the lock.
//
// # Replacing a file
//
// Replace is the only way the tool changes a state file. The caller holds
// the write lock, has read the file (ReadFile) and computed new content.
// Replace writes the new content to a temporary file in the same directory
// (".<name>.tmp-<16 hex digits>"), fsyncs it and gives it the file's mode
// (and owner, where the process may set it); a caller with other work to do
// meanwhile can have that done ahead, by Prepare, and hand the result to
// ReplaceWith. Editors ignore locks, so it
// then reads the file again; if a person or agent changed it, Replace calls
// the caller's rebase function to apply the change to the new content
// instead (at most five times), or, if rebase fails because both sides
// changed the same thing, writes nothing and returns rebase's error.
//
// The swap is renameat2(RENAME_EXCHANGE): the new file takes the name and
// the old one moves to the temporary name, where Replace checks that it
// still holds exactly the bytes the change was based on (without reading
// it again when it is the file re-read and the caller, holding a read lease
// on it since before the re-read, vouches that no one opened it for writing
// since: ReplaceOptions.Unchanged). If it does not
// (someone saved between the re-read and the swap), the two are exchanged
// back and the change is rebased onto that save. Then the old file is
// unlinked and the directory fsynced. A new file is put in place with
// renameat2(RENAME_NOREPLACE), so a file created meanwhile is rebased onto,
// never clobbered.
//
// # Guarantees
//
//   - The path always names a complete file: the old one or the new one,
//     at any instant and after a kill -9 at any instant. It is never missing
//     and never torn (both files are fsynced before the swap; the directory
//     is fsynced after it).
//   - Symbolic links, hard-linked files and non-regular files are refused
//     with an *UnsafeFileError, by ReadFile as well as Replace, before
//     anything is written: a rename would replace the link instead of its
//     target, or leave the other names with the old content.
//   - A save by an editor that puts a new file in place of the old one (vim,
//     emacs) or truncates and rewrites the file (nano), at any time up to the
//     swap, is kept: the change is rebased onto it or nothing is written. A
//     save after the swap replaces the new content, as any later save does.
//   - A kill leaves at most a temporary file. Replace removes its file's
//     temporaries older than a minute before writing, and Cleanup does so for
//     a whole directory. Call either only while holding the write lock.
//
// What remains, each needing a second writer within microseconds:
//
//   - A writer that opened the old file before the swap and first modifies it
//     after Replace checked the displaced copy writes into the unlinked copy.
//     Editors open the file at save time, and those that write in place
//     truncate it as they open it, so their saves are caught by the check.
//   - If a save lands in the displaced copy (caught, swapped back) and another
//     one into the new file in the instant before the swap back, the second
//     is kept as "<name>.saved-<hex>" beside the file and Replace returns an
//     error naming both; a kill -9 in that instant leaves the first in a
//     temporary file that is removed after a minute.
//   - A file system without RENAME_EXCHANGE (some network and FUSE file
//     systems) gets a plain rename after the re-read; a save between the
//     re-read and the rename is then lost. Without RENAME_NOREPLACE a new
//     file is linked into place and the temporary name unlinked.
//
// The new file's modification time is marked (its nanoseconds within the
// microsecond are 1 + its size modulo 999; see WrittenWhole), so that a
// reader can tell a file put in place whole from one someone is writing in
// place and may not have finished.
//
// Extended attributes and ACLs of the old file are not carried over.
//
// # Other systems
//
// Linux is the target. Other Unix systems build with a reduced
// implementation: the run lock is flock(2) on .lock and the write lock
// flock(2) on .lock.write (flock has no byte ranges; it is also owned by the
// open file description, but has no query, so RunHolder and WriteHolder try
// the lock and drop it, which can make a racing TryRunLock fail); macOS swaps with renameatx_np(RENAME_SWAP) and
// creates with RENAME_EXCL; elsewhere the swap is a plain rename, with the
// window described above.
package statefile
