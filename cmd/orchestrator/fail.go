package main

import (
	"context"
	"encoding/json"
	"flag"
	"io"
	"slices"
	"strings"

	"github.com/autoretry/orchestrator/orchestrator"
)

func init() {
	register(&command{
		name:    "fail",
		streams: true,
		summary: "record that an issue failed again",
		usage: `Usage: orchestrator fail ID [--output FILE|-] [--type TYPE] [--json]

Records a failed attempt at issue ID. The failure signature (a SHA-256 of the
output with timestamps, durations, temp paths, ports and the like masked) is
compared with the issue's Failure-Signature:

  - the same failure again: Signature-Repeat-Count + 1
  - a different failure: the old signature goes to Previous-Signatures, the
    count starts again at 1

When the count reaches halt_after_repeats (default 3) the issue is halted
(Halted true, Status escalated), the HALTED banner is printed and the exit
status is 3. Otherwise Status goes back to pending.

The output may be of any size: it is read as it comes, the signature is of
all of it, and only its end is kept. Its last 200 lines (at most 64 KiB)
replace the issue's Failure Details, with a note of how much was cut, fenced
so that nothing in it can change the file's structure; a row is added to its
Attempt History, and the event to logs/retry.log and retry.jsonl.

Flags:
    --output FILE   the failing command's output; - reads standard input
                    (default: no output, an empty failure)
    --type TYPE     execution_error, verification_failed (default), timeout
                    or architect_rejected
    --json          print one JSON object for scripts

Examples:
    go test ./... 2>&1 | orchestrator fail ISSUE-20261122-001 --output -
    orchestrator fail ISSUE-20261122-001 --output build.log --type execution_error
`,
		run: runFail,
	})
}

func runFail(ctx context.Context, e *env, args []string) error {
	c := commands["fail"]
	fs := flag.NewFlagSet("fail", flag.ContinueOnError)
	output := fs.String("output", "", "")
	typ := fs.String("type", orchestrator.FailVerification, "")
	asJSON := fs.Bool("json", false, "")
	id, err := e.oneID(c, fs, args)
	if err != nil {
		return err
	}
	if !slices.Contains(orchestrator.FailureTypes, *typ) {
		return usageErr(c, "unknown failure type %q (want %s)", *typ, strings.Join(orchestrator.FailureTypes, ", "))
	}
	var out io.Reader = strings.NewReader("")
	if *output != "" {
		in, err := e.input(*output, "give the file holding the failing command's output, or - to read standard input")
		if err != nil {
			return err
		}
		defer in.Close()
		out = in
	}
	o, err := e.engine("fail")
	if err != nil {
		return err
	}
	if *asJSON {
		o.Stdout = e.stderr
	}
	rep, err := o.FailFrom(ctx, id, out, *typ)
	if err != nil {
		return err
	}
	if *asJSON {
		if err := json.NewEncoder(e.stdout).Encode(rep); err != nil {
			return err
		}
	}
	if rep.Halted {
		return orchestrator.StopHalted(rep.ID, rep.Code, rep.RepeatCount, o.Invocation)
	}
	return nil
}
