// Package agentout reads what a coding agent printed — Claude Code, Codex CLI,
// Gemini CLI, Aider, opencode — and reports what the agent itself said about
// the run: its cost, its tokens, whether it failed and how, and whether it hit
// a rate or usage limit and when that limit lifts.
//
// The contract:
//
//   - A Reader is an io.Writer: the run's stdout and stderr are written to it
//     as they stream, in chunks of any size; the report does not depend on
//     how the bytes were split. Memory is bounded whatever the input size:
//     the output is read line by line, a line is kept up to 1 MiB (past that
//     only its head and tail), a pretty-printed JSON document up to 4 MiB, and
//     only the last few lines are kept for wordings a terminal wrapped.
//   - Nothing is invented. Cost is reported only where the agent states one in
//     US dollars; tokens exactly as the agent states them (an input count that
//     includes cached tokens stays as stated; reasoning or thought tokens are
//     not added to the output count). Per-step figures are summed; where the
//     agent prints a session total as well as per-message figures, the session
//     total wins.
//   - Structured output (JSON events and results) is read first; text wordings
//     second, and only outside the agent's own message text where the output
//     is structured, so a model talking about rate limits is not a rate limit.
//     Text is matched on the last lines joined, so a message wrapped by a
//     terminal, even mid-word or mid-number, still matches; the lines after
//     a limit are read joined to it until its wording ends.
//   - Rate limits (HTTP 429, RESOURCE_EXHAUSTED, exceeded quotas) and usage
//     limits are limits: Report.Limit is set, with Until whenever the output
//     states an instant or a delay. The instant is read by a small grammar,
//     not a pattern per wording: an anchor ("resets", "try again", "retry",
//     a "resets_at" key, "limit reached|") followed by a delay ("in 3h 2m",
//     "after 25s"), an epoch, or an instant: an optional date ("Sep 15",
//     "Apr 28th, 2026", "10 de jul. de 2026", "tomorrow") and "at", a clock
//     ("5pm", "3:45 PM", "11:52") and an optional zone (an IANA name in
//     parentheses, UTC/GMT with an offset, or an abbreviation such as PST,
//     read as the fixed offset it names). Blanks between the parts are
//     optional, as a wrap drops them. Relative and zone-less times are
//     resolved against the instant the output was produced, in the zone the
//     message names or else the Reader's location; a zone the reader does
//     not know is not guessed, and the instant stays unknown. An overload (HTTP 529,
//     overloaded_error) is an error of kind "overloaded", not a limit. An
//     allocation disabled by an administrator is an error of kind "auth": no
//     clock lifts it.
//   - The reader never panics and never fails: bad input only means less is
//     known.
package agentout
