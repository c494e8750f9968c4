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
// Replace is the only way the tool changes a state file, and Read the way
// it reads one. Editors ignore locks, so the protocol asks the kernel who
// else has the file open instead of guessing from times:
//
//  1. Read: open the file and take a read lease on it (fcntl F_SETLEASE).
//     The kernel grants it only while no process has the file open for
//     writing; while one has, a save is going on, and Read waits for it to
//     end (up to WriterWait). Once granted, the file is whole, and any
//     later open for writing breaks the lease and waits until it is given
//     up: the tool sees every save that begins while it holds the lease.
//  2. If the file no longer holds what the caller's change was computed
//     from, the caller's rebase re-applies the change to what it holds (or
//     reports a conflict: nothing is written).
//  3. Write the new content to ".<name>.tmp-<16 hex digits>" beside the
//     file, with its mode and owner, fsync it, and lease it too.
//  4. Exchange the two names atomically (renameat2 RENAME_EXCHANGE). The
//     displaced file must be the one read, its lease unbroken. Then it is
//     unlinked, the directory fsynced, and the leases given up: done.
//  5. Otherwise someone saved between the read and the exchange (a new
//     file renamed over it, or an open for writing waiting on the lease):
//     exchange the names back, so that the save goes on into the file that
//     has the name, and start again from 1 (for up to 2 s of saves that
//     overtake it; then nothing is written and the error wraps
//     ErrChanged). A save that opened the new file in the instant it had
//     the name goes on into it: that file is kept as "<name>.saved-<16 hex
//     digits>" (SetAsideBeside finds it), never dropped.
//
// A file that is missing at step 1 although the change was computed from
// it is waited for (Changed): an editor that renames the old file away
// puts the new one in place a moment later. A new file is put in place
// with renameat2(RENAME_NOREPLACE), so a file created meanwhile is rebased
// onto, never clobbered.
//
// # Guarantees
//
//   - The path always names a complete file: the old one or the new one,
//     at any instant and after a kill -9 at any instant (both are fsynced
//     before the exchange; the directory after it). A kill leaves at most a
//     temporary file, which the next Replace of the file removes after a
//     minute.
//   - Symbolic links, hard-linked and non-regular files are refused with an
//     *UnsafeFileError, by Read as well as Replace, before anything is
//     written.
//   - A save before the exchange is rebased onto or makes the change fail
//     having written nothing; a save after it replaces the new content, as
//     any later save does.
//
// What remains:
//
//   - A writer that resolved the file's name before the exchange and
//     reaches the lease only after step 4 looked at it writes into the
//     unlinked old file; a kill -9 between the exchange and the exchange
//     back leaves a save that raced with it under the temporary name,
//     which the next Replace removes a minute later: windows of
//     microseconds.
//   - Where no lease can be taken (other systems, another user's file, a
//     network file system) a read is not known to be whole: an empty file
//     that changed since the caller read it is refused (*EmptyFileError),
//     a changed one is read again until it has rested for 100 ms, and
//     step 4 compares the displaced file's content with what was read; a
//     save in place that stalls longer is lost.
//   - A file system without RENAME_EXCHANGE gets a plain rename: a save
//     between the read and the rename is lost.
//   - A process that may not write the file may not replace it either; the
//     new file keeps the old one's owner only where the process may set it
//     (root).
//
// Extended attributes and ACLs of the old file are not carried over.
//
// # Other systems
//
// Linux is the target. Other Unix systems build with a reduced
// implementation: the run lock is flock(2) on .lock and the write lock
// flock(2) on .lock.write (flock has no byte ranges; it is also owned by the
// open file description, but has no query, so RunHolder and WriteHolder try
// the lock and drop it, which can make a racing TryRunLock fail); macOS
// exchanges with renameatx_np(RENAME_SWAP) and creates with RENAME_EXCL;
// elsewhere the exchange is a plain rename. Windows replaces by a plain
// rename after comparing the content.
package statefile
