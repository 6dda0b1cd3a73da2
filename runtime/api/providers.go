package api

import (
	"fmt"
	"net/http"
	"os"
	"strings"
	"unicode"

	"github.com/ensemblework/ensemble/runtime/models"
	"github.com/ensemblework/ensemble/runtime/problem"
	"github.com/ensemblework/ensemble/runtime/secrets"
)

// mountSecrets adds the routes of model-provider keys and of the secrets kept on this computer.
// No route ever answers with a value.
//
//	GET    /api/settings/providers           each provider: whether it has a key and from where; Ollama found or not, its models
//	PUT    /api/settings/providers/{id}/key  {key}: keeps the key encrypted (anthropic, openai); 204
//	DELETE /api/settings/providers/{id}/key  forgets the saved key (the environment's still counts); 204
//	GET    /api/secrets                      names, kinds and allowed origins
//	GET    /api/secrets/seal-key             {kid, alg, spki, fingerprint}: the key a browser seals for
//	PUT    /api/secrets/{name}               {value, allow?}: a run secret; 204
//	PUT    /api/secrets/{name}/sealed        {sealed, decisionId, allow?}: the same, the value in a sealed box (sealed.go); 204
//	DELETE /api/secrets/{name}               204
//	PATCH  /api/secrets/{name}               {allow?, env?, git?, gitUser?}: how runs use it; the secret's details
//	GET    /api/settings/secrets             {mode, names}: which secrets a run that names none gets
//	PUT    /api/settings/secrets             {mode, names?}: the same, changed
func (s *Server) mountSecrets(api func(string, http.HandlerFunc)) {
	if s.opts.Secrets == nil {
		return
	}
	api("GET /api/settings/providers", s.listProviders)
	api("PUT /api/settings/providers/{id}/key", s.setProviderKey)
	api("DELETE /api/settings/providers/{id}/key", s.removeProviderKey)
	api("GET /api/secrets", s.listSecrets)
	api("GET /api/secrets/seal-key", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, s.opts.Secrets.SealKey())
	})
	api("PUT /api/secrets/{name}", s.setSecret)
	api("PUT /api/secrets/{name}/sealed", s.setSealedSecret)
	api("DELETE /api/secrets/{name}", s.removeSecret)
	api("PATCH /api/secrets/{name}", s.setSecretUse)
	api("GET /api/settings/secrets", s.secretRunSettings)
	api("PUT /api/settings/secrets", s.setSecretRunSettings)
}

func (s *Server) setSecretUse(w http.ResponseWriter, r *http.Request) {
	var in secrets.UseChange
	if err := decode(w, r, &in); err != nil {
		s.writeErr(w, r, err)
		return
	}
	if in.Allow == nil && in.Env == nil && in.Git == nil && in.GitUser == nil {
		writeError(w, http.StatusBadRequest, "Say what to change: allow, env, git or gitUser.")
		return
	}
	sc, err := s.opts.Secrets.SetUse(r.Context(), r.PathValue("name"), in)
	if err != nil {
		s.writeErr(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, sc)
}

func (s *Server) secretRunSettings(w http.ResponseWriter, r *http.Request) {
	rs, err := s.opts.Secrets.RunSettings(r.Context())
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, rs)
}

func (s *Server) setSecretRunSettings(w http.ResponseWriter, r *http.Request) {
	var in secrets.RunSettings
	if err := decode(w, r, &in); err != nil {
		s.writeErr(w, r, err)
		return
	}
	rs, err := s.opts.Secrets.SetRunSettings(r.Context(), in)
	if err != nil {
		s.writeErr(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, rs)
}

// keyedProviders are the providers that take a key, in the order Settings shows them.
var keyedProviders = []struct{ id, name, baseEnv string }{
	{"anthropic", "Anthropic", "ANTHROPIC_BASE_URL"},
	{"openai", "OpenAI", "OPENAI_BASE_URL"},
}

// maxProviderKey is far above any provider's key; a longer paste is something else.
const maxProviderKey = 4 << 10

// providerInfo is one provider as Settings shows it.
type providerInfo struct {
	ID      string         `json:"id"`
	Name    string         `json:"name"`
	HasKey  *bool          `json:"hasKey,omitempty"`
	KeyFrom models.KeyFrom `json:"keyFrom"`
	Found   *bool          `json:"found,omitempty"`
	Models  []string       `json:"models,omitempty"`
	BaseURL string         `json:"baseUrl"`
}

func (s *Server) listProviders(w http.ResponseWriter, r *http.Request) {
	src := models.Source{Keys: s.opts.Secrets}
	out := []providerInfo{}
	for _, p := range keyedProviders {
		_, from, err := src.Key(r.Context(), p.id)
		if err != nil {
			s.fail(w, r, err)
			return
		}
		has := from != models.KeyFromNone
		out = append(out, providerInfo{ID: p.id, Name: p.name, HasKey: &has, KeyFrom: from, BaseURL: os.Getenv(p.baseEnv)})
	}
	base := s.opts.OllamaURL
	if base == "" {
		base = models.OllamaURL
	}
	names, err := models.DetectOllama(r.Context(), base)
	found := err == nil
	if names == nil {
		names = []string{}
	}
	out = append(out, providerInfo{ID: "ollama", Name: "Ollama", Found: &found, Models: names, BaseURL: base + "/v1"})
	writeJSON(w, http.StatusOK, map[string]any{"providers": out})
}

// keyedProvider finds the provider named in the path, answering 400 or 404 when it takes no key.
func (s *Server) keyedProvider(w http.ResponseWriter, r *http.Request) (string, bool) {
	id := r.PathValue("id")
	for _, p := range keyedProviders {
		if p.id == id {
			return id, true
		}
	}
	if id == "ollama" {
		writeError(w, http.StatusBadRequest, "Ollama runs on this computer and takes no key.")
	} else {
		writeError(w, http.StatusNotFound, fmt.Sprintf("There is no model provider %q; the providers are anthropic, openai and ollama.", clipText(id)))
	}
	return "", false
}

// providerKeyProblem says in one sentence why key cannot be a provider's key, or "".
func providerKeyProblem(key string) string {
	switch {
	case key == "":
		return "The key is empty; paste the API key from your provider's console."
	case len(key) > maxProviderKey:
		return fmt.Sprintf("The key is longer than %d KB; paste only the API key.", maxProviderKey>>10)
	}
	for _, c := range key {
		if !unicode.IsPrint(c) || unicode.IsSpace(c) {
			return "The key holds a space or an invisible character; paste only the API key."
		}
	}
	return ""
}

func (s *Server) setProviderKey(w http.ResponseWriter, r *http.Request) {
	id, ok := s.keyedProvider(w, r)
	if !ok {
		return
	}
	var in struct {
		Key string `json:"key"`
	}
	if err := decode(w, r, &in); err != nil {
		s.writeErr(w, r, err)
		return
	}
	key := strings.TrimSpace(in.Key) // a paste often brings its line's end
	if p := providerKeyProblem(key); p != "" {
		writeError(w, http.StatusBadRequest, p)
		return
	}
	s.secretAnswer(w, r, s.opts.Secrets.Set(r.Context(), secrets.ProviderName(id), secrets.Provider, key, nil))
}

func (s *Server) removeProviderKey(w http.ResponseWriter, r *http.Request) {
	id, ok := s.keyedProvider(w, r)
	if !ok {
		return
	}
	err := s.opts.Secrets.Remove(r.Context(), secrets.ProviderName(id))
	if problem.Is(err, problem.KindNotFound) {
		err = nil // nothing saved is what was asked for
	}
	s.secretAnswer(w, r, err)
}

func (s *Server) listSecrets(w http.ResponseWriter, r *http.Request) {
	list, err := s.opts.Secrets.List(r.Context())
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"secrets": list})
}

func (s *Server) setSecret(w http.ResponseWriter, r *http.Request) {
	var in struct {
		Value string   `json:"value"`
		Allow []string `json:"allow"`
	}
	if err := decode(w, r, &in); err != nil {
		s.writeErr(w, r, err)
		return
	}
	s.secretAnswer(w, r, s.opts.Secrets.Set(r.Context(), r.PathValue("name"), secrets.Run, in.Value, in.Allow))
}

func (s *Server) removeSecret(w http.ResponseWriter, r *http.Request) {
	s.secretAnswer(w, r, s.opts.Secrets.Remove(r.Context(), r.PathValue("name")))
}

// secretAnswer answers 204, or the refusal's status and sentence.
func (s *Server) secretAnswer(w http.ResponseWriter, r *http.Request, err error) {
	if err != nil {
		s.writeErr(w, r, err)
		return
	}
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusNoContent)
}

// clipText shortens what a person sent for quoting it back.
func clipText(s string) string {
	if r := []rune(s); len(r) > 40 {
		return string(r[:40]) + "…"
	}
	return s
}
