package profiles

import (
	"context"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/ensemblework/ensemble/runtime/events"
	"github.com/ensemblework/ensemble/runtime/jobs"
	"github.com/ensemblework/ensemble/runtime/ledger"
	"github.com/ensemblework/ensemble/runtime/problem"
	"github.com/ensemblework/ensemble/runtime/store"
)

func str(v string) *string { return &v }

func newService(t *testing.T) (*Service, *store.Store) {
	t.Helper()
	st, err := store.Open(context.Background(), filepath.Join(t.TempDir(), "ensemble.db"))
	if err != nil {
		t.Fatal(err)
	}
	bus := events.NewBus()
	t.Cleanup(func() { bus.Close(); st.Close() })
	known := func(agent string) error {
		if agent != "claude" && agent != "codex" {
			return problem.New(problem.KindInvalid, "There is no agent "+agent+".")
		}
		return nil
	}
	return New(Options{Store: st, Writer: ledger.New(st, bus), KnownAgent: known}), st
}

// TestOverCoversEverySetting: each field of SettingsInput left out is taken from the base, and
// each one given is kept.
func TestOverCoversEverySetting(t *testing.T) {
	var base, given jobs.SettingsInput
	bv, gv := reflect.ValueOf(&base).Elem(), reflect.ValueOf(&given).Elem()
	for i := range bv.NumField() {
		bv.Field(i).Set(reflect.New(bv.Field(i).Type().Elem()))
	}
	if got := Over(jobs.SettingsInput{}, base); !reflect.DeepEqual(got, base) {
		t.Errorf("nothing given: %+v, want the base", got)
	}
	for i := range gv.NumField() {
		gv.Field(i).Set(reflect.New(gv.Field(i).Type().Elem()))
	}
	got := reflect.ValueOf(Over(given, base))
	for i := range got.NumField() {
		if got.Field(i).Pointer() != gv.Field(i).Pointer() {
			t.Errorf("field %s given was not kept", got.Type().Field(i).Name)
		}
	}
}

func TestFill(t *testing.T) {
	p := Profile{Agent: "claude", Folder: "/p", Settings: jobs.SettingsInput{Mode: str("review"), Model: str("opus")}}
	for _, c := range []struct {
		name          string
		req           jobs.AssignRequest
		agent, folder string
		repo          string
		mode, model   string
	}{
		{"empty", jobs.AssignRequest{}, "claude", "/p", "", "review", "opus"},
		{"agent and model named", jobs.AssignRequest{Agent: "codex", Settings: jobs.SettingsInput{Model: str("o3")}}, "codex", "/p", "", "review", "o3"},
		{"folder named", jobs.AssignRequest{Folder: "/mine"}, "claude", "/mine", "", "review", "opus"},
		{"repository named", jobs.AssignRequest{RepoURL: "https://x/y"}, "claude", "", "https://x/y", "review", "opus"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := p.Fill(c.req)
			if r.Agent != c.agent || r.Folder != c.folder || r.RepoURL != c.repo || *r.Settings.Mode != c.mode || *r.Settings.Model != c.model {
				t.Errorf("filled %+v %+v", r, r.Settings)
			}
		})
	}
}

func TestPick(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	a := Profile{ID: "prf_a", Name: "A", CreatedAt: t0.Add(time.Hour)}
	b := Profile{ID: "prf_b", Name: "B", CreatedAt: t0}
	c := Profile{ID: "prf_c", Name: "C", CreatedAt: t0.Add(2 * time.Hour), Starred: true}
	for _, tc := range []struct {
		name string
		ps   []Profile
		want string // "" for none
	}{
		{"none", nil, ""},
		{"first saved", []Profile{a, b}, "prf_b"},
		{"starred", []Profile{a, b, c}, "prf_c"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, ok := Pick(tc.ps)
			if ok != (tc.want != "") || p.ID != tc.want {
				t.Errorf("Pick = %q %t, want %q", p.ID, ok, tc.want)
			}
		})
	}
}

// TestService: saving checks its input and saves nothing wrong; the default follows the star,
// else the first saved; one profile at most is starred.
func TestService(t *testing.T) {
	ctx := context.Background()
	s, st := newService(t)
	count := func() int {
		var n int
		st.Reader().QueryRow("SELECT count(*) FROM run_profiles").Scan(&n)
		return n
	}
	if _, ok, err := s.Default(ctx); ok || err != nil {
		t.Fatalf("default with none saved: %t %v", ok, err)
	}
	first, err := s.Create(ctx, Input{Name: str(" Careful  review "), Agent: str("claude"), Folder: str("/src/app/"),
		Settings: &jobs.SettingsInput{Mode: str("review")}})
	if err != nil {
		t.Fatal(err)
	}
	if first.Name != "Careful review" || first.Folder != "/src/app" || *first.Settings.Mode != "review" || first.CreatedAt.IsZero() {
		t.Fatalf("saved %+v", first)
	}
	second, err := s.Create(ctx, Input{Name: str("Another"), Agent: str("codex")})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		in   Input
		want problem.Kind
	}{
		{"no name", Input{Agent: str("claude")}, problem.KindInvalid},
		{"long name", Input{Name: str(string(make([]byte, 61))), Agent: str("claude")}, problem.KindInvalid},
		{"duplicate", Input{Name: str("CAREFUL REVIEW"), Agent: str("claude")}, problem.KindConflict},
		{"unknown agent", Input{Name: str("x"), Agent: str("gpt")}, problem.KindInvalid},
		{"relative folder", Input{Name: str("x"), Agent: str("claude"), Folder: str("src")}, problem.KindInvalid},
		{"bad settings", Input{Name: str("x"), Agent: str("claude"), Settings: &jobs.SettingsInput{Git: str("push")}}, problem.KindInvalid},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := s.Create(ctx, c.in)
			if k := problem.KindOf(err); err == nil || k != c.want {
				t.Errorf("error %v (%v), want %v", err, k, c.want)
			}
			if n := count(); n != 2 {
				t.Errorf("%d saved, want 2", n)
			}
		})
	}
	if p, ok, _ := s.Default(ctx); !ok || p.ID != first.ID {
		t.Errorf("default %q, want the first saved", p.ID)
	}
	if _, err := s.Star(ctx, second.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Star(ctx, first.ID); err != nil {
		t.Fatal(err)
	}
	list, _ := s.List(ctx)
	if len(list) != 2 || list[0].ID != first.ID || !list[0].Starred || list[1].Starred {
		t.Errorf("list %+v: want the one starred first", list)
	}
	if p, _, _ := s.PickProfile(ctx, ""); p.ID != first.ID {
		t.Errorf("default %q, want the starred", p.ID)
	}
	if p, _, err := s.PickProfile(ctx, "another"); err != nil || p.ID != second.ID {
		t.Errorf("by name: %q %v", p.ID, err)
	}
	if _, _, err := s.PickProfile(ctx, "nope"); !problem.Is(err, problem.KindNotFound) {
		t.Errorf("unknown: %v", err)
	}

	// An update changes what it gives; renaming to a name taken is refused.
	up, err := s.Update(ctx, second.ID, Input{Folder: str("/elsewhere")})
	if err != nil || up.Name != "Another" || up.Folder != "/elsewhere" || up.Agent != "codex" {
		t.Errorf("update %+v, %v", up, err)
	}
	if _, err := s.Update(ctx, second.ID, Input{Name: str("careful review")}); !problem.Is(err, problem.KindConflict) {
		t.Errorf("rename onto a taken name: %v", err)
	}
	if err := s.Delete(ctx, first.ID); err != nil {
		t.Fatal(err)
	}
	if p, ok, _ := s.Default(ctx); !ok || p.ID != second.ID {
		t.Errorf("default after deleting the starred: %q", p.ID)
	}
	if err := s.Delete(ctx, first.ID); !problem.Is(err, problem.KindNotFound) {
		t.Errorf("deleting twice: %v", err)
	}
}
