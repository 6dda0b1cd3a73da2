package models

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/ensemblework/ensemble/engines/enginetest"
)

// savedKeys is a secrets store holding keys by provider.
type savedKeys map[string]string

func (k savedKeys) ProviderKey(ctx context.Context, provider string) (string, bool, error) {
	if v, ok := k["fail"]; ok {
		return "", false, errors.New(v)
	}
	v, ok := k[provider]
	return v, ok, nil
}

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func TestSourceKey(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name     string
		keys     Keys
		env      map[string]string
		provider string
		want     string
		from     KeyFrom
	}{
		{"saved wins over environment", savedKeys{"anthropic": "saved-a"}, map[string]string{"ANTHROPIC_API_KEY": "env-a"}, "anthropic", "saved-a", KeyFromSettings},
		{"environment when none saved", savedKeys{}, map[string]string{"ANTHROPIC_API_KEY": "env-a"}, "anthropic", "env-a", KeyFromEnvironment},
		{"no store", nil, map[string]string{"OPENAI_API_KEY": "env-o"}, "openai", "env-o", KeyFromEnvironment},
		{"openai saved", savedKeys{"openai": "saved-o"}, map[string]string{"OPENAI_API_KEY": "env-o"}, "openai", "saved-o", KeyFromSettings},
		{"none", savedKeys{}, nil, "openai", "", KeyFromNone},
		{"ollama has none", savedKeys{"ollama": "x"}, nil, "ollama", "", KeyFromNone},
	} {
		t.Run(tc.name, func(t *testing.T) {
			key, from, err := Source{Keys: tc.keys, Getenv: env(tc.env)}.Key(ctx, tc.provider)
			if err != nil || key != tc.want || from != tc.from {
				t.Fatalf("got %q from %q (%v), want %q from %q", key, from, err, tc.want, tc.from)
			}
		})
	}
}

func TestSourceSendsTheSavedKey(t *testing.T) {
	for _, provider := range []string{"anthropic", "openai"} {
		t.Run(provider, func(t *testing.T) {
			chat := enginetest.New(enginetest.Script{}, enginetest.WithLogf(t.Logf))
			chat.Script(enginetest.Say("hi"))
			var sent string // the model server records headers redacted, so look before it does
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				sent = r.Header.Get("X-Api-Key") + r.Header.Get("Authorization")
				chat.ServeHTTP(w, r)
			}))
			t.Cleanup(func() { srv.Close(); chat.Close() })
			src := Source{Keys: savedKeys{provider: "saved-key-123"}, Timeout: time.Minute,
				Getenv: env(map[string]string{"ANTHROPIC_API_KEY": "env-key", "OPENAI_API_KEY": "env-key"})}
			p, err := src.Provider(provider, srv.URL)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := p.Stream(context.Background(), Request{Model: "m", Messages: []Message{{Role: "user", Text: "hi"}}}, nil); err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(sent, "saved-key-123") || strings.Contains(sent, "env-key") {
				t.Fatalf("sent %q, want the saved key", sent)
			}
		})
	}
}

func TestSourceRefusals(t *testing.T) {
	for _, tc := range []struct {
		name, provider, base string
		keys                 Keys
		want                 string
	}{
		{"anthropic without key, no store", "anthropic", "", nil, "set ANTHROPIC_API_KEY."},
		{"anthropic without key, store", "", "", savedKeys{}, "ensemble secrets set-key anthropic"},
		{"openai without key or base", "openai", "", savedKeys{}, "or a base URL"},
		{"unknown", "mistral", "", nil, "not one of anthropic, openai or ollama"},
		{"store fails", "anthropic", "", savedKeys{"fail": "disk gone"}, "read the saved anthropic key: disk gone"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Source{Keys: tc.keys, Getenv: env(nil)}.Provider(tc.provider, tc.base)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want %q", err, tc.want)
			}
		})
	}
	if _, err := (Source{Getenv: env(nil)}).Provider("openai", "http://127.0.0.1:1/v1"); err != nil {
		t.Fatalf("openai-compatible server without a key: %v", err)
	}
}

// ollama answers /api/tags itself and the chat through a scripted model server.
func ollama(t *testing.T, models string) (*httptest.Server, *enginetest.Server) {
	t.Helper()
	chat := enginetest.New(enginetest.Script{}, enginetest.WithLogf(t.Logf))
	mux := http.NewServeMux()
	mux.HandleFunc("GET /api/tags", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(models))
	})
	mux.Handle("/v1/", chat)
	srv := httptest.NewServer(mux)
	t.Cleanup(func() { srv.Close(); chat.Close() })
	return srv, chat
}

func TestOllama(t *testing.T) {
	srv, chat := ollama(t, `{"models":[{"name":"llama3.2:latest","model":"llama3.2:latest"},{"model":"qwen3:8b"}]}`)
	ctx := context.Background()
	names, err := DetectOllama(ctx, srv.URL)
	if err != nil || strings.Join(names, ",") != "llama3.2:latest,qwen3:8b" {
		t.Fatalf("detect: %v %v", names, err)
	}
	if n2, err := DetectOllama(ctx, srv.URL+"/v1/"); err != nil || len(n2) != 2 {
		t.Fatalf("detect from the /v1 address: %v %v", n2, err)
	}
	chat.Script(enginetest.Say("Hello from Ollama."))
	for _, src := range []func(string, string) (Provider, error){
		Source{Keys: savedKeys{}, Getenv: env(nil)}.Provider,
		func(p, b string) (Provider, error) { return FromEnv(p, b, time.Minute) },
	} {
		p, err := src("ollama", srv.URL+"/v1")
		if err != nil {
			t.Fatal(err)
		}
		chat.Script(enginetest.Say("Hello from Ollama."))
		r, err := p.Stream(ctx, Request{Model: "llama3.2:latest", Messages: []Message{{Role: "user", Text: "hi"}}}, nil)
		if err != nil || r.Text != "Hello from Ollama." {
			t.Fatalf("chat: %q %v", r.Text, err)
		}
	}
	reqs := chat.Requests()
	if len(reqs) != 2 || !strings.HasSuffix(reqs[0].Path, "/v1/chat/completions") || reqs[0].Model != "llama3.2:latest" {
		t.Fatalf("requests %+v", reqs)
	}
}

func TestDetectOllamaAbsent(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	srv.Close() // nothing listens there any more
	start := time.Now()
	if _, err := DetectOllama(context.Background(), srv.URL); err == nil {
		t.Fatal("found an Ollama where none is")
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Fatalf("took %s", d)
	}
	hang := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() }))
	defer hang.Close()
	start = time.Now()
	if _, err := DetectOllama(context.Background(), hang.URL); err == nil || time.Since(start) > 2*time.Second {
		t.Fatalf("a silent server: %v after %s", err, time.Since(start))
	}
}

// OpenAI's own API is spoken as Responses; any other base URL is a compatible server, spoken as
// Chat Completions, and so is Ollama.
func TestSourceOpenAIAPI(t *testing.T) {
	src := Source{Getenv: env(map[string]string{"OPENAI_API_KEY": "k"}), Timeout: time.Minute}
	for _, tc := range []struct {
		provider, baseURL string
		responses         bool
	}{
		{"openai", "", true},
		{"openai", "https://api.openai.com/v1", true},
		{"openai", "http://127.0.0.1:1234/v1", false},
		{"openai", "https://openrouter.ai/api/v1", false},
		{"ollama", "", false},
	} {
		p, err := src.Provider(tc.provider, tc.baseURL)
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := p.(*Responses); ok != tc.responses {
			t.Errorf("%s at %q: %T, want Responses %v", tc.provider, tc.baseURL, p, tc.responses)
		}
	}
	with := Source{Getenv: env(map[string]string{"OPENAI_API_KEY": "k", "OPENAI_BASE_URL": "http://127.0.0.1:8000/v1"})}
	if p, _ := with.Provider("openai", ""); func() bool { _, ok := p.(*OpenAI); return !ok }() {
		t.Errorf("OPENAI_BASE_URL at a compatible server: %T, want Chat Completions", p)
	}
}
