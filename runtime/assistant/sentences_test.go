package assistant

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/ensemblework/ensemble/runtime/needs"
	"github.com/ensemblework/ensemble/runtime/tools/toolstest"
)

// TestSentenceBuildersDoNotDoublePunctuation puts parts that end in every kind of punctuation
// (a preview with its full stop, a question, an error's sentence) through every builder that
// takes one, and checks no sentence doubles it.
func TestSentenceBuildersDoNotDoublePunctuation(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, "anthropic", time.Minute)
	off := []string{"pages"}
	if _, err := f.svc.SetSettings(ctx, SettingsChange{AllowedWriteAreas: &off}); err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	answered := needs.Decision{Status: needs.Answered, AnsweredBy: needs.ByPhone, AnsweredAt: &now, Answer: &needs.Answer{Text: "Apply"}}
	for _, part := range []string{"Add 1 task: “Draft brief”.", "Move 3 tasks to Trash?", "Start the run now!", "Rename it;", "no stop at all"} {
		p := proposal{id: "prp_x", preview: part, tool: "hub_create_tasks", input: json.RawMessage(`{"tasks":[]}`)}
		built := map[string]string{
			"already applied":      alreadyApplied(p),
			"discarded":            wasDiscarded(p),
			"applied or discarded": alreadySettled(p),
			"answered on Needs me": answeredOnNeedsMe(p, answered),
			"held":                 heldTold("for the person's Apply in the chat", part),
			"model error":          modelError("Test Model", errors.New(part)).Error(),
			"plan error":           planError(aiPlans["claude-code"], errors.New(part)).Error(),
			"unknown tool":         unknownTool("hub_nope", []string{"hub_list_tasks"}),
			"tool off":             toolOff(f.svc.cfg.Tools.Get("hub_create_tasks")),
		}
		for name, pp := range map[string]proposal{
			"tool gone":     {preview: part, tool: "hub_nope"},
			"area off":      {preview: part, tool: "hub_create_tasks", input: p.input},
			"input refused": {preview: part, tool: "hub_update_page", input: json.RawMessage(`{"id":3}`)},
		} {
			if _, err := f.svc.heldTool(ctx, pp); err != nil {
				built[name] = err.Error()
			} else {
				t.Errorf("%s: heldTool took it", name)
			}
		}
		for name, s := range built {
			if m := toolstest.Doubled.FindString(s) + toolstest.MidStop.FindString(s); m != "" {
				t.Errorf("%s, from %q: %q doubles its punctuation (%q)", name, part, s, m)
			}
			if s == "" || !endsSentence(s) {
				t.Errorf("%s, from %q: %q does not end as a sentence", name, part, s)
			}
		}
	}
}

func endsSentence(s string) bool {
	switch s[len(s)-1] {
	case '.', '?', '!':
		return true
	}
	return false
}
