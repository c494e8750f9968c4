package orchestrator

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"

	"github.com/autoretry/orchestrator/internal/foundations/config"
	"github.com/autoretry/orchestrator/issuequeue"
)

// Fingerprint is what a halted issue was halted on: its text as people
// wrote it, its Verify check's command, the loop command and the model of
// its retry tier, each as a short hash. The halt records it; when one part
// changes, the halt is released once (ReleaseHalt), with that part as the
// cause.
type Fingerprint struct {
	Issue   string `json:"issue"`
	Check   string `json:"check"`
	Command string `json:"command"`
	Model   string `json:"model"`
}

// toolSections are the sections of an issue the tool writes: they are
// not part of what people wrote, and a change of them releases nothing.
var toolSections = []string{issuequeue.SectionFailureDetails, issuequeue.SectionAttemptHistory, issuequeue.SectionFixInstruction}

// FingerprintOf returns issue is's fingerprint under cfg. Its text is its
// summary and every section the tool never writes (Failure Details,
// Attempt History and Fix Instruction, which a person's fix writes, are
// left out); its model is that of the tier of its last attempt.
func FingerprintOf(is *issuequeue.Issue, cfg *config.Config) Fingerprint {
	var text strings.Builder
	text.WriteString(is.Summary())
	for _, name := range is.SectionNames() {
		if containsFold(toolSections, name) {
			continue
		}
		body, _ := is.Section(name)
		text.WriteString("\x00" + strings.ToLower(name) + "\x00" + body)
	}
	check := is.Verify
	if chk, ok := cfg.Verify(is.Verify); ok {
		check = chk.Command
	}
	_, model := retryTier(cfg.Tiers, is.RetryCount)
	return Fingerprint{Issue: shortHash(text.String()), Check: shortHash(check), Command: shortHash(cfg.Loop.Command), Model: shortHash(model)}
}

func containsFold(list []string, s string) bool {
	for _, v := range list {
		if strings.EqualFold(v, s) {
			return true
		}
	}
	return false
}

func shortHash(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:8])
}

// fingerprint is issue is's fingerprint under the configuration, for the
// event of its halt.
func (o *Orchestrator) fingerprint(is *issuequeue.Issue) *Fingerprint {
	fp := FingerprintOf(is, o.Config)
	return &fp
}
