package jobs

import (
	"testing"

	"github.com/ensemblework/ensemble/engines"
)

func TestObserve(t *testing.T) {
	for _, tc := range []struct {
		name    string
		was     Observed
		ev      engines.Event
		want    Observed
		changed bool
	}{
		{"the model and level on start", Observed{}, engines.Event{Kind: engines.EventStarted, Model: "gpt-5.5", Effort: "high"},
			Observed{Model: "gpt-5.5", Effort: "high"}, true},
		{"a start that reports no level keeps the earlier one", Observed{Model: "gpt-5.5", Effort: "high"},
			engines.Event{Kind: engines.EventStarted, Model: "gpt-5.5"}, Observed{Model: "gpt-5.5", Effort: "high"}, false},
		{"the window on usage", Observed{Model: "opus"}, engines.Event{Kind: engines.EventUsage, ContextTokens: 1_000_000},
			Observed{Model: "opus", ContextTokens: 1_000_000}, true},
		{"usage without a window", Observed{ContextTokens: 200_000}, engines.Event{Kind: engines.EventUsage, Usage: &engines.Usage{InputTokens: 5}},
			Observed{ContextTokens: 200_000}, false},
		{"other events report nothing", Observed{}, engines.Event{Kind: engines.EventMessage, Model: "x", Text: "hi"}, Observed{}, false},
	} {
		o := tc.was
		if changed := o.observe(tc.ev); o != tc.want || changed != tc.changed {
			t.Errorf("%s: got %+v (changed %v), want %+v (changed %v)", tc.name, o, changed, tc.want, tc.changed)
		}
	}
}
