package jobs

import (
	"testing"

	"github.com/ensemblework/ensemble/runtime/judge"
)

// TestDescribeReadsAsSentences: the run's first event names its settings in words, never as
// field names and booleans.
func TestDescribeReadsAsSentences(t *testing.T) {
	off := DefaultSettings()
	off.Internet, off.Sandbox, off.Mode, off.Outside, off.Git, off.AskBeforeCommit = false, false, judge.ModeUnattended, judge.OutsideNone, judge.GitCommit, true
	tests := []struct {
		s    Settings
		want string
	}{
		{DefaultSettings(), "Ask mode; internet on, sandboxed; may read outside its folder; no commits"},
		{off, "Run unattended; internet off, no sandbox; stays in its folder; may commit, not push; asks before each commit"},
	}
	for _, tt := range tests {
		if got := tt.s.describe(); got != tt.want {
			t.Errorf("describe() = %q, want %q", got, tt.want)
		}
	}
}
