package suggest

import "testing"

func TestNearest(t *testing.T) {
	statuses := []string{"pending", "in_progress", "resolved", "escalated", "skipped"}
	tests := []struct {
		s          string
		candidates []string
		want       string
	}{
		{"pendng", statuses, "pending"},
		{"PENDING", statuses, "pending"},
		{"resolvd", statuses, "resolved"},
		{"pend", statuses, "pending"}, // a prefix of three letters or more
		{"done", statuses, ""},
		{"xyz", statuses, ""},
		{"verson", []string{"version", "status"}, "version"},
		{"globl_cap", []string{"global_cap", "max_retries"}, "global_cap"},
		{"", statuses, ""},
	}
	for _, tt := range tests {
		if got := Nearest(tt.s, tt.candidates); got != tt.want {
			t.Errorf("Nearest(%q) = %q, want %q", tt.s, got, tt.want)
		}
	}
}
