package api

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ensemblework/ensemble/runtime/ledger"
	"github.com/ensemblework/ensemble/runtime/models"
	"github.com/ensemblework/ensemble/runtime/secrets"
)

var _ models.Keys = (*secrets.Store)(nil)

// withSecrets mounts the secrets routes on a fixture's server, with an Ollama at ollamaURL.
func withSecrets(t *testing.T, ollamaURL string) (*fixture, *secrets.Store) {
	t.Helper()
	f := newFixture(t)
	return f, addSecrets(t, f, ollamaURL)
}

// addSecrets mounts the secrets routes on f's server, with an Ollama at ollamaURL.
func addSecrets(t *testing.T, f *fixture, ollamaURL string) *secrets.Store {
	t.Helper()
	sec, err := secrets.New(context.Background(), secrets.Options{DataDir: filepath.Dir(f.store.Path()), Store: f.store, Writer: ledger.New(f.store, f.bus)})
	if err != nil {
		t.Fatal(err)
	}
	f.api.opts.Secrets = sec
	f.api.opts.OllamaURL = ollamaURL
	f.srv.Config.Handler = f.api.Handler()
	return sec
}

func providerByID(t *testing.T, out map[string]any, id string) map[string]any {
	t.Helper()
	list, _ := out["providers"].([]any)
	for _, p := range list {
		if m, _ := p.(map[string]any); m["id"] == id {
			return m
		}
	}
	t.Fatalf("no provider %s in %v", id, out)
	return nil
}

func TestProviderRoutes(t *testing.T) {
	t.Setenv("ANTHROPIC_API_KEY", "")
	t.Setenv("OPENAI_API_KEY", "env-openai-key")
	ollama := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/api/tags" {
			w.Write([]byte(`{"models":[{"name":"llama3.2:latest"}]}`))
			return
		}
		http.NotFound(w, r)
	}))
	defer ollama.Close()
	f, sec := withSecrets(t, ollama.URL)
	ctx := context.Background()

	status, out := f.call(t, "GET", "/api/settings/providers", "")
	if status != 200 {
		t.Fatalf("list: %d %v", status, out)
	}
	a, o, l := providerByID(t, out, "anthropic"), providerByID(t, out, "openai"), providerByID(t, out, "ollama")
	if a["hasKey"] != false || a["keyFrom"] != "" || o["hasKey"] != true || o["keyFrom"] != "environment" {
		t.Fatalf("keys before: %v %v", a, o)
	}
	if l["found"] != true || l["baseUrl"] != ollama.URL+"/v1" || len(l["models"].([]any)) != 1 {
		t.Fatalf("ollama: %v", l)
	}

	const key = "sk-ant-api03-the-saved-key-value"
	for _, path := range []string{"/api/settings/providers/anthropic/key", "/api/settings/providers/openai/key"} {
		if status, out := f.call(t, "PUT", path, `{"key":" `+key+`\n"}`); status != 204 {
			t.Fatalf("put %s: %d %v", path, status, out)
		}
	}
	if v, err := sec.Get(ctx, "provider:anthropic"); err != nil || v != key {
		t.Fatalf("saved %q %v", v, err)
	}
	_, out = f.call(t, "GET", "/api/settings/providers", "")
	if a, o := providerByID(t, out, "anthropic"), providerByID(t, out, "openai"); a["keyFrom"] != "settings" || o["keyFrom"] != "settings" {
		t.Fatalf("keys after: %v %v", a, o)
	}
	// The saved key is what the assistant's providers would use.
	if k, from, _ := (models.Source{Keys: sec}).Key(ctx, "openai"); k != key || from != models.KeyFromSettings {
		t.Fatalf("source: %q %q", k, from)
	}

	for _, tc := range []struct {
		name, method, path, body string
		want                     int
		msg                      string
	}{
		{"bad json", "PUT", "/api/settings/providers/anthropic/key", `{"key":`, 400, "not valid JSON"},
		{"unknown field", "PUT", "/api/settings/providers/anthropic/key", `{"key":"x","value":"y"}`, 400, `Unknown field "value"`},
		{"empty key", "PUT", "/api/settings/providers/anthropic/key", `{"key":"  "}`, 400, "The key is empty"},
		{"oversized key", "PUT", "/api/settings/providers/anthropic/key", `{"key":"` + strings.Repeat("k", 5000) + `"}`, 400, "longer than 4 KB"},
		{"oversized body", "PUT", "/api/settings/providers/anthropic/key", `{"key":"` + strings.Repeat("k", 2<<20) + `"}`, 400, "larger than"},
		{"invisible character", "PUT", "/api/settings/providers/anthropic/key", `{"key":"sk-a\u200bb"}`, 400, "invisible character"},
		{"inner space", "PUT", "/api/settings/providers/anthropic/key", `{"key":"sk a"}`, 400, "space"},
		{"ollama takes none", "PUT", "/api/settings/providers/ollama/key", `{"key":"x"}`, 400, "takes no key"},
		{"unknown provider", "PUT", "/api/settings/providers/mistral/key", `{"key":"x"}`, 404, "no model provider"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, out := f.call(t, tc.method, tc.path, tc.body)
			msg, _ := out["error"].(string)
			if status != tc.want || !strings.Contains(msg, tc.msg) {
				t.Fatalf("got %d %q, want %d %q", status, msg, tc.want, tc.msg)
			}
			if v, _ := sec.Get(ctx, "provider:anthropic"); v != key {
				t.Fatalf("the saved key changed: %q", v)
			}
		})
	}

	if status, _ := f.call(t, "DELETE", "/api/settings/providers/anthropic/key", ""); status != 204 {
		t.Fatalf("delete: %d", status)
	}
	if status, _ := f.call(t, "DELETE", "/api/settings/providers/anthropic/key", ""); status != 204 {
		t.Fatalf("delete again: %d", status)
	}
	_, out = f.call(t, "GET", "/api/settings/providers", "")
	if a := providerByID(t, out, "anthropic"); a["hasKey"] != false {
		t.Fatalf("after delete: %v", a)
	}
	ollama.Close()
	_, out = f.call(t, "GET", "/api/settings/providers", "")
	if l := providerByID(t, out, "ollama"); l["found"] != false {
		t.Fatalf("ollama gone: %v", l)
	}
}

func TestSecretRoutes(t *testing.T) {
	f, sec := withSecrets(t, "http://127.0.0.1:1")
	ctx := context.Background()
	const value = "whsec-the-run-secret-value-1234"
	if status, out := f.call(t, "PUT", "/api/secrets/STRIPE_API_KEY", `{"value":"`+value+`","allow":["https://api.stripe.com"]}`); status != 204 {
		t.Fatalf("put: %d %v", status, out)
	}
	status, out := f.call(t, "GET", "/api/secrets", "")
	list, _ := out["secrets"].([]any)
	if status != 200 || len(list) != 1 {
		t.Fatalf("list: %d %v", status, out)
	}
	first := list[0].(map[string]any)
	if first["name"] != "STRIPE_API_KEY" || first["kind"] != "run" || first["allow"].([]any)[0] != "https://api.stripe.com" {
		t.Fatalf("listed %v", first)
	}
	if _, ok := first["value"]; ok {
		t.Fatal("the list holds a value")
	}
	status, out = f.call(t, "GET", "/api/secrets/seal-key", "")
	if status != 200 || out["kid"] != sec.SealKey().Kid || out["alg"] != "ECDH-P256" || out["spki"] == "" || out["fingerprint"] != sec.SealKey().Fingerprint {
		t.Fatalf("seal key: %d %v", status, out)
	}

	for _, tc := range []struct {
		name, method, path, body string
		want                     int
		msg                      string
	}{
		{"reserved name", "PUT", "/api/secrets/GITHUB_TOKEN", `{"value":"x1234"}`, 400, "GITHUB_TOKEN is reserved"},
		{"reserved prefix", "PUT", "/api/secrets/OPENAI_KEY", `{"value":"x1234"}`, 400, "starting with OPENAI_"},
		{"bad name", "PUT", "/api/secrets/my-key", `{"value":"x1234"}`, 400, "not an environment variable name"},
		{"bad json", "PUT", "/api/secrets/STRIPE_API_KEY", `{"value":`, 400, "not valid JSON"},
		{"unknown field", "PUT", "/api/secrets/STRIPE_API_KEY", `{"value":"x","origins":[]}`, 400, `Unknown field "origins"`},
		{"allow not a list", "PUT", "/api/secrets/STRIPE_API_KEY", `{"value":"x","allow":"https://a.example"}`, 400, "must be a list"},
		{"empty value", "PUT", "/api/secrets/STRIPE_API_KEY", `{"value":""}`, 400, "empty"},
		{"oversized value", "PUT", "/api/secrets/STRIPE_API_KEY", `{"value":"` + strings.Repeat("v", 17<<10) + `"}`, 400, "longer than 16 KB"},
		{"http origin", "PUT", "/api/secrets/STRIPE_API_KEY", `{"value":"x","allow":["http://api.stripe.com"]}`, 400, "must be https"},
		{"remove unknown", "DELETE", "/api/secrets/NOPE", "", 404, "no secret named NOPE"},
		{"no token", "GET", "/api/secrets", "", 401, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var h []string
			if tc.want == 401 {
				h = []string{"Authorization", ""}
			}
			status, out := f.call(t, tc.method, tc.path, tc.body, h...)
			msg, _ := out["error"].(string)
			if status != tc.want || !strings.Contains(msg, tc.msg) {
				t.Fatalf("got %d %q, want %d %q", status, msg, tc.want, tc.msg)
			}
			if v, _ := sec.Get(ctx, "STRIPE_API_KEY"); v != value {
				t.Fatal("the saved value changed")
			}
			if list, _ := sec.List(ctx); len(list) != 1 {
				t.Fatalf("secrets now %v", list)
			}
		})
	}
	// No event holds the value.
	var n int
	f.store.Reader().QueryRow("SELECT count(*) FROM events WHERE data LIKE '%whsec-the-run%'").Scan(&n)
	if n != 0 {
		t.Fatalf("%d events hold the value", n)
	}
	if status, _ := f.call(t, "DELETE", "/api/secrets/STRIPE_API_KEY", ""); status != 204 {
		t.Fatalf("delete: %d", status)
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(f.store.Path()), secrets.KeyFile)); err != nil {
		t.Fatal(err)
	}
}
