package assistant

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ensemblework/ensemble/engines/enginetest"
	"github.com/ensemblework/ensemble/runtime/problem"
)

// An effort the model does not take is refused before anything reaches the model server.
func TestTurnRefusesEffortBeforeSpending(t *testing.T) {
	model := enginetest.NewServer(t)
	model.Script(enginetest.Say("Hi."))
	e := openRuntime(t, filepath.Join(t.TempDir(), "ensemble.db"), model)
	ctx := context.Background()
	for _, tc := range []struct{ model, effort, want string }{
		{"claude-3-5-haiku-latest", "high", "claude-3-5-haiku-latest takes no effort level"},
		{"claude-opus-4-5", "max", `claude-opus-4-5 takes effort low, medium or high, not "max".`},
		{"some-local-model", "low", "Ensemble does not know which effort levels some-local-model takes"},
	} {
		_, err := e.svc.Turn(ctx, TurnRequest{Text: "hi", Model: tc.model, Effort: tc.effort}, nil)
		if !problem.Is(err, problem.KindInvalid) || !strings.Contains(err.Error(), tc.want) {
			t.Fatalf("%s %s: err %v, want %q", tc.model, tc.effort, err, tc.want)
		}
	}
	if n := len(model.Requests()); n != 0 {
		t.Fatalf("%d requests reached the model server", n)
	}
	if _, err := e.svc.Turn(ctx, TurnRequest{Text: "hi", Model: "claude-sonnet-4-5", Effort: "high"}, nil); err != nil {
		t.Fatal(err)
	}
	if n := len(model.Requests()); n != 1 {
		t.Fatalf("%d requests, want 1", n)
	}
}

// Settings refuse a model and effort that do not go together, and keep the effort to its model.
func TestSettingsCheckEffortAgainstModel(t *testing.T) {
	s := func(v string) *string { return &v }
	if _, err := (SettingsChange{Model: s("gpt-4o"), Provider: s("openai"), Effort: s("high")}).apply(DefaultSettings()); err == nil ||
		err.Error() != "gpt-4o takes no effort level: leave effort empty for it." {
		t.Fatalf("err %v", err)
	}
	st, err := (SettingsChange{Model: s("gpt-5"), Provider: s("openai"), Effort: s("minimal")}).apply(DefaultSettings())
	if err != nil {
		t.Fatal(err)
	}
	if got := st.fill(TurnRequest{}); got.Effort != "minimal" || got.Model != "gpt-5" {
		t.Fatalf("fill %+v", got)
	}
	if got := st.fill(TurnRequest{Model: "gpt-4o"}); got.Effort != "" {
		t.Fatalf("another model took the settings' effort: %+v", got)
	}
}
