package main

import (
	"os"
	"strings"
	"testing"
)

// docs/agents.md shows, for each agent, the command init --agent writes,
// in a sh block under the agent's heading: the two never drift apart.
func TestAgentCommandsDocumented(t *testing.T) {
	b, err := os.ReadFile("../../docs/agents.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	for _, ac := range agentCommands {
		if !strings.Contains(doc, "```sh\n"+ac.command+"\n```") {
			t.Errorf("docs/agents.md lacks the %s command init writes:\n%s", ac.kind, ac.command)
		}
	}
	if got, want := strings.Count(doc, "```sh\n"), len(agentCommands); got != want {
		t.Errorf("docs/agents.md has %d command blocks, init knows %d agents", got, want)
	}
}
