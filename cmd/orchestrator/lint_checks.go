package main

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/autoretry/orchestrator/orchestrator"
)

// silentCheckFindings warns about the Verify checks whose last recorded
// failure printed nothing, at their [verify.NAME] line in config.toml (the
// check's command is what to change): a failure without output tells the
// loop nothing, and never counts against another issue.
func silentCheckFindings(e *env) []string {
	silent, _ := orchestrator.SilentChecks(e.dir) // unreadable lines are lint's and the budgets' concern
	if len(silent) == 0 {
		return nil
	}
	path := e.configPath
	if path == "" {
		path = filepath.Join(e.dir, "config.toml")
	}
	var out []string
	for _, s := range silent {
		out = append(out, fmt.Sprintf("%s:%d:1: warning: %s", path, tableLine(path, "verify."+s.Check), s.Warning()))
	}
	return out
}

// tableLine returns the line of the TOML table header [name] in the file at
// path, or 1 when it is not there.
func tableLine(path, name string) int {
	b, err := os.ReadFile(path)
	if err != nil {
		return 1
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for n := 1; sc.Scan(); n++ {
		l := strings.TrimSpace(sc.Text())
		if h, ok := strings.CutPrefix(l, "["); ok {
			h, _, _ = strings.Cut(h, "]")
			if strings.TrimSpace(h) == name || strings.Trim(strings.TrimSpace(h), `"`) == name {
				return n
			}
		}
	}
	return 1
}
