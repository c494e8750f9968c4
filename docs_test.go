package example

import (
	"os"
	"strings"
	"testing"
)

// TestDataSafetyFitsOnePage proves that the data-safety model users read,
// the "Data safety" section of docs/safety.md, stays one page: at most 600
// words, so that the write protocol can be explained whole.
func TestDataSafetyFitsOnePage(t *testing.T) {
	b, err := os.ReadFile("docs/safety.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(b), "\n## Data safety\n")
	if !ok {
		t.Fatal(`docs/safety.md has no "## Data safety" section`)
	}
	if end := strings.Index(section, "\n## "); end >= 0 {
		section = section[:end]
	}
	if n := len(strings.Fields(section)); n > 600 {
		t.Errorf("the data-safety section of docs/safety.md has %d words; keep it to one page, 600 at most", n)
	}
}
