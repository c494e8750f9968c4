package main

import (
	"context"
	"flag"
	"fmt"

	"github.com/autoretry/orchestrator"
	"github.com/autoretry/orchestrator/signature"
)

func init() {
	register(&command{
		name:    "signature",
		summary: "print the failure signature of some output",
		usage: `Usage: orchestrator signature [--raw] [--explain] [FILE|-]

Prints the failure signature of FILE, or of standard input when FILE is "-"
or missing: the SHA-256 of the output after normalization, as "fail" records
it. Reruns of one failure get one signature although their timestamps,
durations, temporary paths, pids, ports, addresses and colours differ;
exit statuses, HTTP status codes, names and messages still tell failures
apart. The rules (set v1) are listed in "go doc
github.com/autoretry/orchestrator/signature"; the [signature] section of
the configuration can add patterns to redact or turn normalization off.

Flags:
    --raw       the SHA-256 of the exact bytes, as sha256sum prints it
    --explain   print the normalized text instead: its sha256sum is the
                signature, and comparing two of them shows why two outputs
                differ

Examples:
    go test ./... 2>&1 | orchestrator signature
    orchestrator signature --explain build.log
    diff <(orchestrator signature --explain run1.log) <(orchestrator signature --explain run2.log)
    orchestrator signature --raw build.log
`,
		run: runSignature,
	})
}

func runSignature(ctx context.Context, e *env, args []string) error {
	c := commands["signature"]
	fs := flag.NewFlagSet("signature", flag.ContinueOnError)
	raw := fs.Bool("raw", false, "")
	explain := fs.Bool("explain", false, "")
	args, err := e.parseFlags(c, fs, args)
	if err != nil {
		return err
	}
	if *raw && *explain {
		return usageErr(c, "--raw and --explain cannot be used together")
	}
	if len(args) > 1 {
		return usageErr(c, "signature takes one FILE, got %d", len(args))
	}
	name := "-"
	if len(args) == 1 {
		name = args[0]
	}
	in, err := e.input(name, "give an existing file, or - to read standard input")
	if err != nil {
		return err
	}
	defer in.Close()

	if *raw {
		sum, err := signature.Raw(in)
		if err != nil {
			return withCode(exitUsage, err)
		}
		fmt.Fprintln(e.stdout, sum)
		return nil
	}
	rules, err := e.signatureRules()
	if err != nil {
		return err
	}
	if *explain {
		if err := rules.Explain(e.stdout, in); err != nil {
			return withCode(exitUsage, err)
		}
		return nil
	}
	sum, err := rules.Sum(in)
	if err != nil {
		return withCode(exitUsage, err)
	}
	fmt.Fprintln(e.stdout, sum)
	return nil
}

// signatureRules compiles the signature rules configured for this run: the
// [signature] section of the configuration (normalize, extra_patterns), with
// TMPDIR from the command's environment. A bad pattern is a usage error.
func (e *env) signatureRules() (*signature.Rules, error) {
	if e.sigRules != nil {
		return e.sigRules, nil
	}
	cfg, err := e.config()
	if err != nil {
		return nil, err
	}
	rules, err := signature.Compile(signature.Options{
		Rules:  cfg.Signature.Normalize,
		Extra:  cfg.Signature.ExtraPatterns,
		Getenv: e.getenv,
	})
	if err != nil {
		return nil, withCode(exitUsage, err)
	}
	e.sigRules = rules
	return rules, nil
}

// newSignature is how the engine computes failure signatures.
func (e *env) newSignature() (orchestrator.SignatureWriter, error) {
	r, err := e.signatureRules()
	if err != nil {
		return nil, err
	}
	return r.NewDigest(), nil
}
