package tools

import (
	"errors"
	"testing"

	"github.com/ensemblework/ensemble/runtime/tools/toolstest"
)

func TestClauseAndSentence(t *testing.T) {
	for _, c := range []struct{ in, clause, sentence string }{
		{"Add 1 task: “Draft brief”.", "Add 1 task: “Draft brief”", "Add 1 task: “Draft brief”."},
		{"  Done!  ", "Done", "Done!"},
		{"Really?", "Really", "Really?"},
		{"no stop", "no stop", "no stop."},
		{"ends with a colon:", "ends with a colon", "ends with a colon."},
		{"two stops..", "two stops", "two stops."},
		{"and so on…", "and so on…", "and so on…"},
		{"", "", ""},
	} {
		if got := Clause(c.in); got != c.clause {
			t.Errorf("Clause(%q) = %q, want %q", c.in, got, c.clause)
		}
		if got := Sentence(c.in); got != c.sentence {
			t.Errorf("Sentence(%q) = %q, want %q", c.in, got, c.sentence)
		}
	}
}

// TestStepErrorDoesNotDoublePunctuation puts a step's error ending in every kind of punctuation
// into a workflow's failure, and checks the sentence does not double it.
func TestStepErrorDoesNotDoublePunctuation(t *testing.T) {
	for _, part := range []string{"Add 1 task: “Draft brief”.", "Move 3 tasks to Trash?", "Start the run now!", "Rename it;", "no stop at all"} {
		s := (&stepError{n: 2, total: 3, id: "b", tool: "hub_create_tasks", err: errors.New(part)}).Error()
		if m := toolstest.Doubled.FindString(s) + toolstest.MidStop.FindString(s); m != "" {
			t.Errorf("from %q: %q doubles its punctuation (%q)", part, s, m)
		}
		if s == "" || s[len(s)-1] != '.' {
			t.Errorf("from %q: %q does not end as a sentence", part, s)
		}
	}
}
