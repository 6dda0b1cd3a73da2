package secrets

import (
	"context"
	"reflect"
	"strings"
	"testing"

	"github.com/ensemblework/ensemble/runtime/problem"
)

func TestScopeFor(t *testing.T) {
	list := []Secret{
		{Name: "ENV_A", Kind: Run, Allow: []string{}, Use: Use{Env: true}},
		{Name: "ENV_B", Kind: Run, Allow: []string{}, Use: Use{Env: true}},
		{Name: "GH_PAT", Kind: Run, Allow: []string{"https://github.com"}, Use: Use{Git: true}},
		{Name: "STRIPE", Kind: Run, Allow: []string{"https://api.stripe.com"}},
		{Name: "BOTH", Kind: Run, Allow: []string{"https://gitlab.com"}, Use: Use{Env: true, Git: true}},
		{Name: "provider:anthropic", Kind: Provider, Use: Use{Env: true}},
	}
	all := RunSettings{Mode: ModeAll}
	named := func(n ...string) RunSettings { return RunSettings{Mode: ModeNamed, Names: n} }
	tests := []struct {
		name     string
		rs       RunSettings
		run      []string
		env, git []string
		isNamed  bool
		missing  []string
	}{
		{"mode all gives every environment secret, no git", all, nil, []string{"ENV_A", "ENV_B", "BOTH"}, nil, false, nil},
		{"mode named without names gives none", named(), nil, nil, nil, true, nil},
		{"mode named gives the computer's names", named("ENV_B", "GH_PAT"), nil, []string{"ENV_B"}, []string{"GH_PAT"}, true, nil},
		{"the run's names win over mode all", all, []string{"ENV_A"}, []string{"ENV_A"}, nil, true, nil},
		{"the run's names win over the computer's", named("ENV_B"), []string{"GH_PAT"}, nil, []string{"GH_PAT"}, true, nil},
		{"a reference secret named is not in the environment", all, []string{"STRIPE"}, nil, nil, true, nil},
		{"env and git both", all, []string{"BOTH"}, []string{"BOTH"}, []string{"BOTH"}, true, nil},
		{"a name not saved is missing", all, []string{"NOPE", "ENV_A", "NOPE"}, []string{"ENV_A"}, nil, true, []string{"NOPE"}},
		{"a provider key is never a run's", all, []string{"provider:anthropic"}, nil, nil, true, []string{"provider:anthropic"}},
		{"named twice, given once", all, []string{"ENV_A", "ENV_A", "GH_PAT", "GH_PAT"}, []string{"ENV_A"}, []string{"GH_PAT"}, true, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := ScopeFor(list, tc.rs, tc.run)
			var git []string
			for _, g := range got.Git {
				git = append(git, g.Name)
			}
			if !reflect.DeepEqual(got.Env, tc.env) || !reflect.DeepEqual(git, tc.git) || got.Named != tc.isNamed || !reflect.DeepEqual(got.Missing, tc.missing) {
				t.Errorf("got env %v git %v named %v missing %v, want env %v git %v named %v missing %v",
					got.Env, git, got.Named, got.Missing, tc.env, tc.git, tc.isNamed, tc.missing)
			}
		})
	}
}

func TestDefaultUse(t *testing.T) {
	tests := []struct {
		allow []string
		want  Use
	}{
		{nil, Use{Env: true}},
		{[]string{"https://api.stripe.com"}, Use{}},
		{[]string{"https://github.com"}, Use{Git: true}},
		{[]string{"https://api.stripe.com", "https://gitlab.com"}, Use{Git: true}},
		{[]string{"https://git.example.com"}, Use{}},
	}
	for _, tc := range tests {
		if got := DefaultUse(tc.allow); got != tc.want {
			t.Errorf("DefaultUse(%v) = %+v, want %+v", tc.allow, got, tc.want)
		}
	}
}

func TestGitConfig(t *testing.T) {
	got := GitConfig("!helper get", []string{"https://github.com", "https://gitlab.com"})
	want := map[string]string{
		"GIT_CONFIG_COUNT": "4",
		"GIT_CONFIG_KEY_0": "credential.https://github.com.helper", "GIT_CONFIG_VALUE_0": "",
		"GIT_CONFIG_KEY_1": "credential.https://github.com.helper", "GIT_CONFIG_VALUE_1": "!helper get",
		"GIT_CONFIG_KEY_2": "credential.https://gitlab.com.helper", "GIT_CONFIG_VALUE_2": "",
		"GIT_CONFIG_KEY_3": "credential.https://gitlab.com.helper", "GIT_CONFIG_VALUE_3": "!helper get",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("GitConfig = %v, want %v", got, want)
	}
	if GitConfig("x", nil) != nil {
		t.Error("no origins should give no git settings")
	}
}

func TestReadGitRequest(t *testing.T) {
	q, err := ReadGitRequest(strings.NewReader("protocol=https\r\nhost=github.com\npath=o/r.git\nwwwauth[]=Basic\n\nignored=1\n"))
	if err != nil || q != (GitRequest{Protocol: "https", Host: "github.com", Path: "o/r.git"}) {
		t.Fatalf("got %+v, %v", q, err)
	}
	if _, err := ReadGitRequest(strings.NewReader("nonsense\n")); err == nil {
		t.Error("a line without = should be refused")
	}
}

// Saving, changing how a secret is used, and the computer's settings, through SQLite.
func TestUseAndRunSettings(t *testing.T) {
	ctx := context.Background()
	s, _ := open(t, t.TempDir())
	if err := s.Set(ctx, "MY_ENV", Run, value, nil); err != nil {
		t.Fatal(err)
	}
	if err := s.Set(ctx, "GH_PAT", Run, value+"-gh", []string{"https://github.com"}); err != nil {
		t.Fatal(err)
	}
	list, _ := s.List(ctx)
	if !list[0].Git || list[0].Env || !list[1].Env || list[1].Git {
		t.Fatalf("saved with %+v", list)
	}
	sc, err := s.SetUse(ctx, "GH_PAT", UseChange{Env: ptrTo(true), GitUser: ptrTo(" me ")})
	if err != nil || !sc.Env || !sc.Git || sc.GitUser != "me" {
		t.Fatalf("SetUse: %+v, %v", sc, err)
	}
	if _, err := s.SetUse(ctx, "MY_ENV", UseChange{Git: ptrTo(true)}); !problem.Is(err, problem.KindInvalid) || !strings.Contains(err.Error(), "allow one first") {
		t.Errorf("git without an origin: %v", err)
	}
	if _, err := s.SetUse(ctx, "NOPE", UseChange{Env: ptrTo(true)}); !problem.Is(err, problem.KindNotFound) {
		t.Errorf("unknown secret: %v", err)
	}
	if _, err := s.SetUse(ctx, "GH_PAT", UseChange{Allow: &[]string{"ftp://x"}}); !problem.Is(err, problem.KindInvalid) {
		t.Errorf("bad origin: %v", err)
	}
	// A new value with new destinations starts again from what those make it; the git user stays.
	if err := s.Set(ctx, "GH_PAT", Run, value+"-gh2", []string{"https://github.com"}); err != nil {
		t.Fatal(err)
	}
	list, _ = s.List(ctx)
	if list[0].Env || !list[0].Git || list[0].GitUser != "me" {
		t.Errorf("set again: %+v", list[0])
	}

	rs, err := s.RunSettings(ctx)
	if err != nil || rs.Mode != ModeAll || len(rs.Names) != 0 {
		t.Fatalf("default run settings %+v, %v", rs, err)
	}
	if _, err := s.SetRunSettings(ctx, RunSettings{Mode: ModeAll, Names: []string{"MY_ENV"}}); !problem.Is(err, problem.KindInvalid) {
		t.Errorf("names with mode all: %v", err)
	}
	if _, err := s.SetRunSettings(ctx, RunSettings{Mode: "some"}); !problem.Is(err, problem.KindInvalid) {
		t.Errorf("unknown mode: %v", err)
	}
	if _, err := s.SetRunSettings(ctx, RunSettings{Mode: ModeNamed, Names: []string{"PATH"}}); !problem.Is(err, problem.KindInvalid) {
		t.Errorf("reserved name: %v", err)
	}
	if _, err := s.SetRunSettings(ctx, RunSettings{Mode: ModeNamed, Names: []string{"MY_ENV", "MY_ENV"}}); err != nil {
		t.Fatal(err)
	}
	g, err := s.ForRun(ctx, nil)
	if err != nil || !reflect.DeepEqual(g.Env, []string{"MY_ENV"}) || g.Values["MY_ENV"] != value || len(g.Git) != 0 {
		t.Fatalf("grant of a run naming none in mode named: %+v, %v", g.Scope, err)
	}
	g, err = s.ForRun(ctx, []string{"GH_PAT"})
	if err != nil || len(g.Env) != 0 || len(g.Git) != 1 {
		t.Fatalf("grant of a run naming GH_PAT: %+v, %v", g.Scope, err)
	}
	a, err := s.GitSignIn(ctx, g.Git, GitRequest{Protocol: "https", Host: "GitHub.com"}, "run r1")
	if err != nil || a.Username != "me" || a.Password != value+"-gh2" {
		t.Fatalf("git sign-in: %+v, %v", a.Username, err)
	}
	for _, q := range []GitRequest{{Protocol: "https", Host: "gitlab.com"}, {Protocol: "http", Host: "github.com"}, {Protocol: "https", Host: "github.com@evil"}} {
		if _, err := s.GitSignIn(ctx, g.Git, q, "run r1"); !problem.Is(err, problem.KindNotFound) {
			t.Errorf("%+v: %v", q, err)
		}
	}
	if err := s.Remove(ctx, "GH_PAT"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.GitSignIn(ctx, g.Git, GitRequest{Protocol: "https", Host: "github.com"}, "run r1"); !problem.Is(err, problem.KindNotFound) {
		t.Errorf("a removed secret signed git in: %v", err)
	}
}

func ptrTo[T any](v T) *T { return &v }

// ForCommand gives a node's command only environment secrets it names, and ledgers each use.
func TestForCommand(t *testing.T) {
	s, st := open(t, t.TempDir())
	ctx := context.Background()
	if err := s.Set(ctx, "DEPLOY_TOKEN", Run, "tok-env-1234567890", nil); err != nil {
		t.Fatal(err)
	}
	if err := s.Set(ctx, "STRIPE_API_KEY", Run, "sk-ref-1234567890", []string{"https://api.stripe.com"}); err != nil {
		t.Fatal(err)
	}
	got, err := s.ForCommand(ctx, []string{"DEPLOY_TOKEN"}, "@ada")
	if err != nil || len(got) != 1 || got["DEPLOY_TOKEN"] != "tok-env-1234567890" {
		t.Fatalf("ForCommand = %v, %v", got, err)
	}
	for _, names := range [][]string{{"STRIPE_API_KEY"}, {"NOT_SAVED"}} {
		if _, err := s.ForCommand(ctx, names, "@ada"); err == nil {
			t.Errorf("ForCommand(%v) gave a secret not for the environment", names)
		}
	}
	var used int
	st.Reader().QueryRow("SELECT count(*) FROM events WHERE kind = ? AND data NOT LIKE '%tok-env%'", string(KindUsed)).Scan(&used)
	if used != 1 {
		t.Fatalf("%d uses ledgered; want 1, without the value", used)
	}
}

// A run whose secrets were chosen by name may send only those by reference; any other, every one.
func TestScopeAllows(t *testing.T) {
	list := []Secret{{Name: "STRIPE_API_KEY", Kind: Run, Allow: []string{"https://api.stripe.com"}}, {Name: "DEPLOY_TOKEN", Kind: Run, Use: Use{Env: true}}}
	for _, tt := range []struct {
		rs    RunSettings
		names []string
		ref   string
		want  bool
	}{
		{RunSettings{Mode: ModeAll}, nil, "STRIPE_API_KEY", true},
		{RunSettings{Mode: ModeAll}, []string{"DEPLOY_TOKEN"}, "STRIPE_API_KEY", false},
		{RunSettings{Mode: ModeAll}, []string{"STRIPE_API_KEY"}, "STRIPE_API_KEY", true},
		{RunSettings{Mode: ModeNamed}, nil, "STRIPE_API_KEY", false},
		{RunSettings{Mode: ModeNamed, Names: []string{"STRIPE_API_KEY"}}, nil, "STRIPE_API_KEY", true},
	} {
		if got := ScopeFor(list, tt.rs, tt.names).Allows(tt.ref); got != tt.want {
			t.Errorf("mode %s, run names %v: Allows(%s) = %v; want %v", tt.rs.Mode, tt.names, tt.ref, got, tt.want)
		}
	}
}
