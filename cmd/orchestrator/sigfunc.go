package main

import (
	"github.com/autoretry/orchestrator/signature"
)

// signatureRules compiles the [signature] configuration: the rule set
// (normalize = "v1" or "off") and extra_patterns.
func (e *env) signatureRules() (*signature.Rules, error) {
	cfg, err := e.config()
	if err != nil {
		return nil, err
	}
	return signature.Compile(signature.Options{Rules: cfg.Signature.Normalize, Extra: cfg.Signature.ExtraPatterns})
}

// signatureFunc is how the engine computes failure signatures.
func (e *env) signatureFunc() func([]byte) (string, error) {
	return func(b []byte) (string, error) {
		r, err := e.signatureRules()
		if err != nil {
			return "", err
		}
		return r.SumBytes(b), nil
	}
}
