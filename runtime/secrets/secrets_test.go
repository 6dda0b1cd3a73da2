package secrets

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ensemblework/ensemble/runtime/events"
	"github.com/ensemblework/ensemble/runtime/ledger"
	"github.com/ensemblework/ensemble/runtime/problem"
	"github.com/ensemblework/ensemble/runtime/store"
)

// open opens the store and the secrets in dir; both close when the test ends.
func open(t *testing.T, dir string) (*Store, *store.Store) {
	t.Helper()
	return openWith(t, dir, nil)
}

func openWith(t *testing.T, dir string, passphrase func() (string, error)) (*Store, *store.Store) {
	t.Helper()
	st, err := store.Open(context.Background(), filepath.Join(dir, "ensemble.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	s, err := New(context.Background(), Options{DataDir: dir, Store: st, Writer: ledger.New(st, events.NewBus()), Passphrase: passphrase})
	if err != nil {
		t.Fatal(err)
	}
	return s, st
}

const value = "sk-live-7d1c0ffee-the-plain-value-9f3a"

func TestValuesAreNeverInTheClearOnDisk(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	s, st := open(t, dir)
	if err := s.Set(ctx, "STRIPE_API_KEY", Run, value, []string{"https://api.stripe.com"}); err != nil {
		t.Fatal(err)
	}
	if err := s.Set(ctx, ProviderName("anthropic"), Provider, value+"-provider", nil); err != nil {
		t.Fatal(err)
	}
	// Every file in the data folder: the database, its WAL, secret.key, seal-key.json.
	check := func() {
		t.Helper()
		entries, _ := os.ReadDir(dir)
		var seen []string
		for _, e := range entries {
			b, err := os.ReadFile(filepath.Join(dir, e.Name()))
			if err != nil {
				t.Fatal(err)
			}
			seen = append(seen, e.Name())
			if bytes.Contains(b, []byte("sk-live-7d1c0ffee")) {
				t.Errorf("%s holds the value in the clear", e.Name())
			}
		}
		if !strings.Contains(strings.Join(seen, " "), "ensemble.db-wal") {
			t.Logf("files: %v", seen)
		}
	}
	check()
	for _, f := range []string{KeyFile, SealKeyFile} {
		fi, err := os.Stat(filepath.Join(dir, f))
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != 0o600 {
			t.Errorf("%s mode %v, want 0600", f, fi.Mode().Perm())
		}
	}
	// Nor in an event.
	var n int
	if err := st.Reader().QueryRow("SELECT count(*) FROM events WHERE data LIKE '%sk-live%'").Scan(&n); err != nil || n != 0 {
		t.Fatalf("events holding the value: %d %v", n, err)
	}
	if _, err := st.Writer().Exec("PRAGMA wal_checkpoint(TRUNCATE)"); err != nil {
		t.Fatal(err)
	}
	check()
}

func TestRoundTripAfterReopening(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	s, st := open(t, dir)
	if err := s.Set(ctx, "STRIPE_API_KEY", Run, value, []string{"https://API.stripe.com/", "https://api.stripe.com"}); err != nil {
		t.Fatal(err)
	}
	fp := s.SealKey()
	st.Close()

	s2, _ := open(t, dir)
	got, err := s2.Get(ctx, "STRIPE_API_KEY")
	if err != nil || got != value {
		t.Fatalf("get after reopening: %q, %v", got, err)
	}
	if s2.SealKey() != fp {
		t.Fatalf("seal key changed on reopening: %+v, was %+v", s2.SealKey(), fp)
	}
	list, err := s2.List(ctx)
	if err != nil || len(list) != 1 || list[0].Name != "STRIPE_API_KEY" || list[0].Kind != Run ||
		len(list[0].Allow) != 1 || list[0].Allow[0] != "https://api.stripe.com" {
		t.Fatalf("list %+v %v", list, err)
	}
	// The Redactor knows the values from the start, before anything is set again.
	if h := s2.Redactor().Hide("Bearer " + value + "."); h != "Bearer [secret STRIPE_API_KEY]." {
		t.Fatalf("hide %q", h)
	}
	if err := s2.Remove(ctx, "STRIPE_API_KEY"); err != nil {
		t.Fatal(err)
	}
	if _, err := s2.Get(ctx, "STRIPE_API_KEY"); !problem.Is(err, problem.KindNotFound) {
		t.Fatalf("get after remove: %v", err)
	}
	if err := s2.Remove(ctx, "STRIPE_API_KEY"); !problem.Is(err, problem.KindNotFound) {
		t.Fatalf("remove twice: %v", err)
	}
	if h := s2.Redactor().Hide(value); h != value {
		t.Fatalf("removed value still hidden: %q", h)
	}
}

func TestAnotherKeyDoesNotOpen(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	s, st := open(t, dir)
	if err := s.Set(ctx, "STRIPE_API_KEY", Run, value, nil); err != nil {
		t.Fatal(err)
	}
	st.Close()
	if err := os.WriteFile(filepath.Join(dir, KeyFile), bytes.Repeat([]byte{7}, 32), 0o600); err != nil {
		t.Fatal(err)
	}
	st2, err := store.Open(ctx, filepath.Join(dir, "ensemble.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st2.Close()
	_, err = New(ctx, Options{DataDir: dir, Store: st2, Writer: ledger.New(st2, events.NewBus())})
	if err == nil || strings.Contains(err.Error(), "sk-live") {
		t.Fatalf("opened with another key: %v", err)
	}
}

func TestSetRefuses(t *testing.T) {
	s, _ := open(t, t.TempDir())
	ctx := context.Background()
	for _, tc := range []struct {
		name, secret string
		kind         Kind
		value        string
		allow        []string
		want         string
	}{
		{"reserved PATH", "PATH", Run, value, nil, "PATH is reserved"},
		{"github token", "GITHUB_TOKEN", Run, value, nil, "GITHUB_TOKEN is reserved"},
		{"anthropic prefix", "ANTHROPIC_API_KEY", Run, value, nil, "starting with ANTHROPIC_"},
		{"openai prefix", "OPENAI_BASE_URL", Run, value, nil, "starting with OPENAI_"},
		{"ensemble prefix", "ENSEMBLE_DATA", Run, value, nil, "starting with ENSEMBLE_"},
		{"git prefix", "GIT_ASKPASS", Run, value, nil, "starting with GIT_"},
		{"lower-case reserved", "path", Run, value, nil, "reserved"},
		{"loader", "LD_PRELOAD", Run, value, nil, "starting with LD_"},
		{"not a variable", "MY-KEY", Run, value, nil, "not an environment variable name"},
		{"starts with digit", "1KEY", Run, value, nil, "not an environment variable name"},
		{"empty name", "", Run, value, nil, "needs a name"},
		{"provider name as run", "provider:anthropic", Run, value, nil, "not an environment variable name"},
		{"run name as provider", "STRIPE", Provider, value, nil, "provider:<id>"},
		{"unknown kind", "STRIPE", Kind("other"), value, nil, "provider or run"},
		{"empty value", "STRIPE", Run, "", nil, "empty"},
		{"oversized value", "STRIPE", Run, strings.Repeat("x", MaxValue+1), nil, "longer than 16 KB"},
		{"control character", "STRIPE", Run, "ab\x00cd", nil, "control character"},
		{"http origin", "STRIPE", Run, value, []string{"http://api.stripe.com"}, "must be https"},
		{"origin with path", "STRIPE", Run, value, []string{"https://api.stripe.com/v1"}, "not an origin"},
		{"provider with allow", ProviderName("openai"), Provider, value, []string{"https://api.openai.com"}, "takes no allowed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := s.Set(ctx, tc.secret, tc.kind, tc.value, tc.allow)
			if !problem.Is(err, problem.KindInvalid) || !strings.Contains(problem.Sentence(err), tc.want) {
				t.Fatalf("got %v, want a refusal with %q", err, tc.want)
			}
			if strings.Count(strings.TrimSuffix(problem.Sentence(err), "."), ". ") > 0 {
				t.Errorf("more than one sentence: %q", problem.Sentence(err))
			}
		})
	}
	if list, _ := s.List(ctx); len(list) != 0 {
		t.Fatalf("refusals kept something: %+v", list)
	}
	for _, ok := range []string{"STRIPE_API_KEY", "_X", "my_token", "PATHWAY"} {
		if p := NameProblem(Run, ok); p != "" {
			t.Errorf("%s refused: %s", ok, p)
		}
	}
	if err := s.Set(ctx, "LOCAL", Run, value, []string{"http://127.0.0.1:8080"}); err != nil {
		t.Errorf("http to this computer refused: %v", err)
	}
}

func TestRedactor(t *testing.T) {
	d := NewRedactor()
	if d.Hide("nothing known") != "nothing known" {
		t.Fatal("hid with nothing known")
	}
	d.set("SHORT", "abc") // below MinHidden: never hidden
	d.set("TOKEN", "tok-123456")
	d.set("LONG", "tok-123456-and-more")
	for _, tc := range []struct{ in, want string }{
		{"a tok-123456 b", "a [secret TOKEN] b"},
		{"x tok-123456-and-more y", "x [secret LONG] y"},
		{"abc abc", "abc abc"},
		{"tok-123456tok-123456", "[secret TOKEN][secret TOKEN]"},
	} {
		if got := d.Hide(tc.in); got != tc.want {
			t.Errorf("Hide(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	// The forms a program passes a value on in are hidden too (spec 002 §8.7.5).
	d.set("PW", `p@ss "w/rd"+1`)
	for _, tc := range []struct{ in, want string }{
		{`{"password":"p@ss \"w/rd\"+1"}`, `{"password":"[secret PW]"}`},
		{"?pw=p%40ss+%22w%2Frd%22%2B1&x", "?pw=[secret PW]&x"},
		{"https://h/p@ss%20%22w%2Frd%22+1", "https://h/[secret PW]"},
		{"Basic cEBzcyAidy9yZCIrMQ==", "Basic [secret PW]"},
		{"cEBzcyAidy9yZCIrMQ", "[secret PW]"},
	} {
		if got := d.Hide(tc.in); got != tc.want {
			t.Errorf("Hide(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	var nilR *Redactor
	if nilR.Hide("x") != "x" {
		t.Error("nil Redactor changed its input")
	}
}

func TestRunSecretLimit(t *testing.T) {
	s, _ := open(t, t.TempDir())
	ctx := context.Background()
	for i := range MaxRunSecrets {
		if err := s.Set(ctx, "S"+strings.Repeat("X", i%3)+string(rune('A'+i/26))+string(rune('A'+i%26)), Run, value, nil); err != nil {
			t.Fatal(err)
		}
	}
	err := s.Set(ctx, "ONE_TOO_MANY", Run, value, nil)
	if !problem.Is(err, problem.KindInvalid) {
		t.Fatalf("101st: %v", err)
	}
	// A provider key is not a run secret.
	if err := s.Set(ctx, ProviderName("openai"), Provider, value, nil); err != nil {
		t.Fatal(err)
	}
}

func TestLocalSealer(t *testing.T) {
	dir := t.TempDir()
	s1, err := OpenLocalSealer(dir)
	if err != nil {
		t.Fatal(err)
	}
	box := s1.Seal([]byte("device seed"), "ctx-a")
	s2, err := OpenLocalSealer(dir) // the same key, from the file
	if err != nil {
		t.Fatal(err)
	}
	if got, err := s2.Open(box, "ctx-a"); err != nil || string(got) != "device seed" {
		t.Fatalf("open: %q %v", got, err)
	}
	if _, err := s2.Open(box, "ctx-b"); err == nil {
		t.Fatal("opened under another context")
	}
	other, _ := OpenLocalSealer(t.TempDir())
	if _, err := other.Open(box, "ctx-a"); err == nil {
		t.Fatal("opened with another computer's key")
	}
}
