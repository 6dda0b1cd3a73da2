package records

import (
	"context"
	"testing"
)

// TestTaskHeads: another package reads tasks by id, in Trash or not, the page cut as asked; the
// recent list leaves Trash out.
func TestTaskHeads(t *testing.T) {
	s, _, st := newService(t)
	ctx := context.Background()
	a, err := s.Tasks().Create(ctx, me, TaskInput{Title: Some("Ship the login page"), Page: Some("Héllo world"), Labels: Some([]string{"web"})})
	if err != nil {
		t.Fatal(err)
	}
	b, err := s.Tasks().Create(ctx, me, TaskInput{Title: Some("Old idea")})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Tasks().Trash(ctx, me, b.ID); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name  string
		chars int
		page  string
	}{{"whole page", 0, "Héllo world"}, {"cut by characters", 2, "Hé"}} {
		t.Run(c.name, func(t *testing.T) {
			hs, err := TaskHeads(ctx, st.Reader(), []string{a.ID, b.ID, "tsk_missing"}, c.chars)
			if err != nil || len(hs) != 2 {
				t.Fatalf("heads %+v, %v; want the two tasks there are", hs, err)
			}
			for _, h := range hs {
				switch h.ID {
				case a.ID:
					if h.Page != c.page || h.Title != a.Title || h.LabelsJSON != `["web"]` || h.Status != string(a.Status) || h.DeletedAt != nil || h.UpdatedAt.IsZero() {
						t.Errorf("head %+v", h)
					}
				case b.ID:
					if h.DeletedAt == nil {
						t.Errorf("the trashed task has no DeletedAt: %+v", h)
					}
				}
			}
		})
	}
	recent, err := RecentTaskHeads(ctx, st.Reader(), 5, 10)
	if err != nil || len(recent) != 1 || recent[0].ID != a.ID || recent[0].Page != "Héllo" {
		t.Errorf("recent %+v, %v; want only the task not in Trash, its page cut to 5", recent, err)
	}
	if name, err := s.SpaceName(ctx, PersonalSpace); err != nil || name == "" {
		t.Errorf("space name %q, %v", name, err)
	}
}
