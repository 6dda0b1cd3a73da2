package jobs

import (
	"context"
	"errors"
	"github.com/ensemblework/ensemble/runtime/ledger"
	"strings"
	"testing"

	"github.com/ensemblework/ensemble/engines"
	"github.com/ensemblework/ensemble/runtime/problem"
	"github.com/ensemblework/ensemble/runtime/secrets"
)

// A run that names secrets gets its environment secrets in CommandEnv and git's helper for the
// one allowed for a git host; the agent echoing a value leaves it hidden in the trace; the git
// token answers while the run goes on and not after.
func TestRunSecretsEnvAndGit(t *testing.T) {
	const envValue, gitValue = "stripe-value-0a9f8e7d6c5b", "ghp-like-value-1b2c3d4e5f6a"
	hold := make(chan struct{})
	started := make(chan engines.Spec, 1)
	e := newEnv(t, []step{
		{do: func(s engines.Spec) { started <- s }},
		ev(engines.EventMessage, func(v *engines.Event) { v.Text = "I printed it: " + envValue }),
		{hold: hold},
	})
	sec, err := secrets.New(context.Background(), secrets.Options{DataDir: t.TempDir(), Store: e.st, Writer: e.w})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := sec.Set(ctx, "MY_STRIPE", secrets.Run, envValue, nil); err != nil {
		t.Fatal(err)
	}
	if err := sec.Set(ctx, "OTHER_ENV", secrets.Run, "other-value-99887766", nil); err != nil {
		t.Fatal(err)
	}
	if err := sec.Set(ctx, "GH_PAT", secrets.Run, gitValue, []string{"https://github.com"}); err != nil {
		t.Fatal(err)
	}
	e.svc = New(Options{Store: e.st, Writer: e.w, Records: e.rec, Drivers: map[string]engines.Driver{"fake": e.driver},
		Asker: e.asker, DataDir: e.data, Home: "/home/nobody", Timing: e.timing, Secrets: sec, Hide: sec.Redactor().Hide,
		GitHelper: func(tok string) string { return "!helper --token " + tok }})
	if err := e.svc.Start(ctx); err != nil {
		t.Fatal(err)
	}
	j := e.assign(AssignRequest{Folder: e.folder, Settings: SettingsInput{Secrets: &[]string{"MY_STRIPE", "GH_PAT", "NOT_SAVED"}}})
	spec := <-started
	if spec.CommandEnv["MY_STRIPE"] != envValue {
		t.Errorf("MY_STRIPE not in the agent's environment: %v", keysOf(spec.CommandEnv))
	}
	if _, ok := spec.CommandEnv["OTHER_ENV"]; ok {
		t.Error("a secret the run does not name is in its environment")
	}
	if _, ok := spec.CommandEnv["GH_PAT"]; ok {
		t.Error("a secret by reference is in the environment")
	}
	if spec.CommandEnv["GIT_CONFIG_COUNT"] != "2" || spec.CommandEnv["GIT_CONFIG_KEY_1"] != "credential.https://github.com.helper" {
		t.Errorf("git settings: %v", keysOf(spec.CommandEnv))
	}
	tok, ok := strings.CutPrefix(spec.CommandEnv["GIT_CONFIG_VALUE_1"], "!helper --token ")
	if !ok || !strings.HasPrefix(tok, "ens_git_") {
		t.Fatalf("helper %q", spec.CommandEnv["GIT_CONFIG_VALUE_1"])
	}
	if !strings.Contains(spec.Prompt, "$MY_STRIPE") || strings.Contains(spec.Prompt, envValue) || !strings.Contains(spec.Prompt, "https://github.com") {
		t.Errorf("brief %q", spec.Prompt)
	}
	e.waitStatus(j.ID, Running)

	a, err := e.svc.GitCredential(ctx, tok, secrets.GitRequest{Protocol: "https", Host: "github.com"})
	if err != nil || a.Username != secrets.DefaultGitUser || a.Password != gitValue {
		t.Fatalf("git credential for github.com: %v", err)
	}
	if _, err := e.svc.GitCredential(ctx, tok, secrets.GitRequest{Protocol: "https", Host: "gitlab.com"}); !problem.Is(err, problem.KindNotFound) {
		t.Errorf("another host: %v", err)
	}
	if _, err := e.svc.GitCredential(ctx, "ens_git_nope", secrets.GitRequest{Protocol: "https", Host: "github.com"}); !errors.Is(err, ErrNoRunToken) {
		t.Errorf("another token: %v", err)
	}
	close(hold)
	e.waitEnded(j.ID, Done)
	if _, err := e.svc.GitCredential(ctx, tok, secrets.GitRequest{Protocol: "https", Host: "github.com"}); !errors.Is(err, ErrNoRunToken) {
		t.Errorf("after the run: %v", err)
	}
	if got, _ := e.svc.Get(ctx, j.ID); strings.Join(got.Settings.Secrets, ",") != "MY_STRIPE,GH_PAT,NOT_SAVED" {
		t.Errorf("kept settings %v", got.Settings.Secrets)
	}
	var notes []string
	for _, x := range e.trace(j.ID) {
		for _, s := range []string{x.Data.Text, x.Data.Output, x.Data.Reason} {
			if strings.Contains(s, envValue) || strings.Contains(s, gitValue) || strings.Contains(s, tok) {
				t.Errorf("%s holds a value: %q", x.Kind, s)
			}
		}
		if x.Kind == KindMessage && !strings.Contains(x.Data.Text, "[secret MY_STRIPE]") {
			t.Errorf("message %q", x.Data.Text)
		}
		if x.Kind == KindNote {
			notes = append(notes, x.Data.Text)
		}
	}
	all := strings.Join(notes, "\n")
	for _, want := range []string{"NOT_SAVED", "Secrets in the agent's environment: MY_STRIPE.", "git signs in to https://github.com with GH_PAT.", "git signed in to https://github.com"} {
		if !strings.Contains(all, want) {
			t.Errorf("notes lack %q:\n%s", want, all)
		}
	}
	var uses int
	e.st.Reader().QueryRow("SELECT count(*) FROM events WHERE kind = 'secret.use' AND data LIKE '%\"how\":\"git\"%'").Scan(&uses)
	if uses != 1 {
		t.Errorf("secret.use ledgered %d times, want 1", uses)
	}
}

// A run that names no secrets, in mode all, gets every environment secret and no git sign-in.
func TestRunSecretsModeAll(t *testing.T) {
	started := make(chan engines.Spec, 1)
	e := newEnv(t, []step{{do: func(s engines.Spec) { started <- s }}})
	sec, err := secrets.New(context.Background(), secrets.Options{DataDir: t.TempDir(), Store: e.st, Writer: e.w})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	sec.Set(ctx, "ENV_ONE", secrets.Run, "value-one-123456", nil)
	sec.Set(ctx, "GH_PAT", secrets.Run, "value-two-123456", []string{"https://github.com"})
	e.svc = New(Options{Store: e.st, Writer: e.w, Records: e.rec, Drivers: map[string]engines.Driver{"fake": e.driver},
		Asker: e.asker, DataDir: e.data, Home: "/home/nobody", Timing: e.timing, Secrets: sec,
		GitHelper: func(tok string) string { return "!helper " + tok }})
	if err := e.svc.Start(ctx); err != nil {
		t.Fatal(err)
	}
	j := e.assign(AssignRequest{Folder: e.folder})
	spec := <-started
	if spec.CommandEnv["ENV_ONE"] != "value-one-123456" || spec.CommandEnv["GIT_CONFIG_COUNT"] != "" || len(spec.CommandEnv) != 1 {
		t.Errorf("mode all gave %v", keysOf(spec.CommandEnv))
	}
	e.waitEnded(j.ID, Done)
}

func keysOf(m map[string]string) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// A node's run gets only the secrets it names, none by default, whatever the computer's mode; and
// it sends none by reference either.
func TestRunSecretsNodeRunNamesNone(t *testing.T) {
	started := make(chan engines.Spec, 1)
	e := newEnv(t, []step{{do: func(s engines.Spec) { started <- s }}})
	sec, err := secrets.New(context.Background(), secrets.Options{DataDir: t.TempDir(), Store: e.st, Writer: e.w})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	sec.Set(ctx, "ENV_ONE", secrets.Run, "value-one-123456", nil)
	e.svc = New(Options{Store: e.st, Writer: e.w, Records: e.rec, Drivers: map[string]engines.Driver{"fake": e.driver},
		Asker: e.asker, DataDir: e.data, Home: "/home/nobody", Timing: e.timing, Secrets: sec})
	if err := e.svc.Start(ctx); err != nil {
		t.Fatal(err)
	}
	j := e.assign(AssignRequest{Folder: e.folder, Actor: ledger.Actor{Kind: ledger.Node, ID: "nd_1"}})
	spec := <-started
	if len(spec.CommandEnv) != 0 {
		t.Errorf("a node's run got %v", keysOf(spec.CommandEnv))
	}
	e.waitEnded(j.ID, Done)
	got, err := e.svc.Get(ctx, j.ID)
	if err != nil || !got.Settings.SecretsNamed {
		t.Fatalf("the run's settings after a read: %+v, %v", got.Settings, err)
	}
}
