// Package templates renders every message a person sees — the auto-retry
// banners, the escalation message, the retry context given to agents, the
// run summary and the new-issue skeleton — from text/template files that a
// state directory can override.
//
// # Templates
//
// Each template is a file NAME.tmpl embedded in the binary, executed with
// one data type:
//
//	triggered      Triggered     the end-of-loop check starts an auto-retry loop;
//	                             ends with "🔄 Auto-retry triggered for N critical issue(s)"
//	succeeded      Succeeded     an issue that needed retries is resolved
//	exhausted      Exhausted     issues used all their retries and are escalated
//	halted         Halted        the same failure signature repeated too often
//	cap            Cap           the run's global auto-retry cap is reached
//	escalation     Escalation    a person must decide about an issue
//	retry_context  RetryContext  the <retry_context> feedback for the agent
//	summary        RunSummary    the retry summary at the end of a run
//	issue          NewIssue      a new issue for issue_queue.md ("orchestrator add")
//
// # Overrides
//
// A file <state dir>/templates/NAME.tmpl replaces the embedded template NAME
// (Set.Dir); Embedded gives the default to start from. An override sees the
// same data and functions. One that cannot be read, parsed or executed is an
// *OverrideError naming the file and line, never half-written output; Check
// finds most such errors before anything runs, by executing every override
// with representative data.
//
// # Functions
//
// Besides text/template's built-ins (len, print, printf, eq, and, or, …):
//
//	color NAMES TEXT    TEXT in ANSI colour when Set.Color, else TEXT; NAMES is one
//	                    or more of bold dim red green yellow blue magenta cyan
//	rule N              a line of N "═"
//	plural N WORD [PL]  "1 attempt", "2 attempts"; PL is the plural when not WORD+"s"
//	pct PART WHOLE      PART/WHOLE as a whole percentage, "60%"; "0%" when WHOLE is 0
//	truncate N TEXT     TEXT cut to N characters, ending in "…" when cut
//	indent N TEXT       N spaces before every non-empty line of TEXT
//	tail N TEXT         the last N lines of TEXT, after a line saying how many were cut
//	chomp TEXT          TEXT without its final line breaks
//	fence TEXT          TEXT as a fenced markdown code block that nothing in TEXT can end
//	xml TEXT            TEXT escaped for an XML element (&, <, >)
//	attr TEXT           TEXT escaped for a double-quoted XML attribute
//	cell TEXT           TEXT as one markdown table cell: "|" escaped, line breaks as spaces
//	short SIG           the first 12 characters of a failure signature
//	join DIR NAME…      a file path, as filepath.Join (e.g. the state dir's files)
//	duration D          a time.Duration for people: "12m30s", "4ms"
//
// Whatever the data holds, output is valid UTF-8 (invalid bytes become
// U+FFFD), and without Set.Color it holds no escape sequence: ANSI codes in
// captured failure output are removed too.
package templates
