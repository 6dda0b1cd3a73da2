package assistant

import (
	"slices"
	"testing"
)

// TestPlansListsEveryPlan: the list clients are given (and the UI's generated catalog) names every
// plan the assistant runs, once.
func TestPlansListsEveryPlan(t *testing.T) {
	ps := Plans()
	if len(ps) != len(aiPlans) {
		t.Fatalf("Plans lists %d plans, the assistant runs %d", len(ps), len(aiPlans))
	}
	var ids []string
	for _, p := range ps {
		a, ok := aiPlans[p.ID]
		if !ok || slices.Contains(ids, p.ID) {
			t.Errorf("Plans lists %q: unknown or twice", p.ID)
		}
		ids = append(ids, p.ID)
		if p.Agent != a.agent || p.Title != a.title || !slices.Equal(p.Efforts, a.efforts) {
			t.Errorf("Plans: %+v, want the plan's %+v", p, a)
		}
	}
}
