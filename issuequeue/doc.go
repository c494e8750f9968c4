// Package issuequeue reads and edits the two markdown files that hold the
// orchestrator's state, issue_queue.md and session_state.md, which people edit
// by hand while agents and the tool write them too.
//
// # Reading
//
// Files are parsed for positions only: a line scanner finds the headings and
// tables as goldmark with its GFM table extension reads them (it hands
// goldmark just the few blocks it cannot settle alone, within a budget of
// work per byte), and an edit replaces just the bytes of the cells and
// sections it changes. Everything else — preamble, prose, other tables,
// comments, unknown fields, blank lines, CRLF line endings, trailing spaces,
// a byte-order mark, a missing final newline — stays byte for
// byte as it was.
//
// An issue is a heading "## ISSUE-YYYYMMDD-NNN" (or "###") followed by a
// two-column field table (or its fields as list items, "- **Status**:
// skipped") and optional subsections one heading level below. It
// ends at the next heading of its own level or higher. Headings inside code
// blocks, HTML blocks and comments are not issues.
//
// ParseQueue, ParseArchive and ParseState never fail: every problem is a
// Finding with a line and column, and Err gathers the error-level ones into
// a *ValidationError. An issue with errors of its own is quarantined: it is
// reported and left alone, and the rest of the queue stays usable.
//
// # Writing
//
// A change is a list of Edit values that name what they change (an issue's
// field, a subsection, a row) rather than where. Store.Update applies them
// under the state directory's write lock, replaces each file atomically
// (see package statefile), and re-applies them with Rebase to whatever a
// person saved meanwhile; an edit of something that person changed too is a
// *ConflictError, not a silent overwrite. A change of two files first
// records itself in IntentFile, so that a command killed between the two
// writes is completed by the next one.
//
// # Files
//
// scan.go finds the block structure line by line; blocks.go recognizes the
// leaf blocks; goldmark.go is where the scanner hands lines to goldmark,
// within a work budget. record.go builds records (headings with their field
// table and subsections) from a scan; queue.go and issue.go read them as
// issues, state.go as session state; listfield.go reads and edits an
// issue's fields written as list items. edit.go and rebase.go change the
// source; store.go and intent.go read and write the files.
package issuequeue
