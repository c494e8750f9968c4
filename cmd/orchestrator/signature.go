package main

import (
	"context"
	"flag"
	"fmt"
	"path/filepath"

	"github.com/autoretry/orchestrator/orchestrator"
	"github.com/autoretry/orchestrator/signature"
)

func init() {
	register(&command{
		name:    "signature",
		streams: true,
		summary: "print the failure signature of some output",
		usage: `Usage: orchestrator signature [--raw] [--explain] [--root DIR] [FILE|-]

Prints the failure signature of FILE, or of standard input when FILE is "-"
or missing: the SHA-256 of the output after normalization, as "fail" records
it. Reruns of one failure get one signature although their timestamps,
durations, temporary paths, pids, ports, addresses, colours, checkout
directory, passing tests and the order parallel tests finished in differ;
which tests failed and how, exit statuses, HTTP status codes, names and
messages still tell failures apart. The rules (set v3) are listed in "go
doc github.com/autoretry/orchestrator/signature"; the [signature] section
of the configuration can add patterns to redact, choose the older rules
(normalize = "v2" or "v1") or turn normalization off.

Flags:
    --raw       the SHA-256 of the exact bytes, as sha256sum prints it
    --explain   print the normalized text instead: its sha256sum is the
                signature, and comparing two of them shows why two outputs
                differ
    --root DIR  the workspace root the output was made in, masked as <root>
                (default: $ORCHESTRATOR_ROOT, else the directory that holds
                the state directory)

Examples:
    go test ./... 2>&1 | orchestrator signature
    orchestrator signature --explain build.log
    diff <(orchestrator signature --explain run1.log) <(orchestrator signature --explain run2.log)
    orchestrator signature --raw build.log
    orchestrator signature --root ~/src/app test.log
`,
		run: runSignature,
	})
}

func runSignature(ctx context.Context, e *env, args []string) error {
	c := commands["signature"]
	fs := flag.NewFlagSet("signature", flag.ContinueOnError)
	raw := fs.Bool("raw", false, "")
	explain := fs.Bool("explain", false, "")
	root := fs.String("root", "", "")
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
	_, in, err := e.inputArg(args)
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
	if *root != "" {
		abs, err := filepath.Abs(*root)
		if err != nil {
			return usageErr(c, "--root %s: %v", *root, err)
		}
		e.sigRoot = abs
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
// TMPDIR from the command's environment and the workspace root. A bad
// pattern is a usage error.
func (e *env) signatureRules() (*signature.Rules, error) {
	if e.sigRules != nil {
		return e.sigRules, nil
	}
	cfg, err := e.config()
	if err != nil {
		return nil, err
	}
	rules, err := e.compileSignature(cfg.Signature.Normalize, cfg.Signature.ExtraPatterns)
	if err != nil {
		return nil, err
	}
	e.sigRules = rules
	return rules, nil
}

func (e *env) compileSignature(set string, extra []string) (*signature.Rules, error) {
	rules, err := signature.Compile(signature.Options{
		Rules:  set,
		Root:   e.workspaceRoot(),
		Extra:  extra,
		Getenv: e.getenv,
	})
	if err != nil {
		return nil, withCode(exitUsage, err)
	}
	return rules, nil
}

// workspaceRoot is the directory failing commands run in, masked in
// signatures: --root, else $ORCHESTRATOR_ROOT (which run gives its loops
// and checks), else the directory that holds the state directory.
func (e *env) workspaceRoot() string {
	if e.sigRoot != "" {
		return e.sigRoot
	}
	if r := e.getenv("ORCHESTRATOR_ROOT"); r != "" && filepath.IsAbs(r) {
		return r
	}
	abs, err := filepath.Abs(e.dir)
	if err != nil {
		return ""
	}
	return filepath.Dir(abs)
}

// newSignature is how the engine computes failure signatures. Beside the
// configured rules it computes the signatures of the output under the
// older rule sets too: an issue whose signature was recorded before an
// upgrade still sees its failure as the same.
func (e *env) newSignature() (orchestrator.SignatureWriter, error) {
	r, err := e.signatureRules()
	if err != nil {
		return nil, err
	}
	older := signature.Older(r.Name())
	if len(older) == 0 {
		return r.NewDigest(), nil
	}
	if e.sigOlder == nil {
		cfg, err := e.config()
		if err != nil {
			return nil, err
		}
		for _, set := range older {
			o, err := e.compileSignature(set, cfg.Signature.ExtraPatterns)
			if err != nil {
				return nil, err
			}
			e.sigOlder = append(e.sigOlder, o)
		}
	}
	d := digests{r.NewDigest()}
	for _, o := range e.sigOlder {
		d = append(d, o.NewDigest())
	}
	return d, nil
}

// digests computes a signature under the current rules (the first) and
// under the older ones.
type digests []*signature.Digest

func (d digests) Write(p []byte) (int, error) {
	for _, x := range d {
		if _, err := x.Write(p); err != nil {
			return 0, err
		}
	}
	return len(p), nil
}

func (d digests) Sum() string { return d[0].Sum() }

func (d digests) OlderSums() []string {
	sums := make([]string, 0, len(d)-1)
	for _, o := range d[1:] {
		sums = append(sums, o.Sum())
	}
	return sums
}
