package enginetest

import (
	"net/http"
	"strings"
	"time"
)

// defaultModels are listed when a script names none: the CLIs' defaults as
// agent-clis.md records them, and a neutral name.
var defaultModels = []string{"claude-opus-4-8", "claude-sonnet-4-5", "claude-haiku-4-5", "gpt-5.5", "gemini-2.5-flash", "fake-model"}

// serveModels answers GET …/models. Under /v1beta it is a Gemini list;
// otherwise one body that reads as both an OpenAI list (object, data[].id,
// owned_by) and an Anthropic one (data[].type, display_name, has_more).
func (s *Server) serveModels(w http.ResponseWriter, req *http.Request) {
	s.recordOther(req, nil)
	models := s.models
	if len(models) == 0 {
		models = defaultModels
	}
	if strings.Contains(req.URL.Path, "/v1beta/") {
		var list []any
		for _, m := range models {
			list = append(list, map[string]any{"name": "models/" + m, "displayName": m,
				"supportedGenerationMethods": []string{"generateContent", "streamGenerateContent", "countTokens"}})
		}
		writeJSON(w, http.StatusOK, map[string]any{"models": list})
		return
	}
	created := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	var data []any
	for _, m := range models {
		data = append(data, map[string]any{
			"id": m, "object": "model", "created": created.Unix(), "owned_by": "enginetest",
			"type": "model", "display_name": m, "created_at": created.Format(time.RFC3339),
		})
	}
	writeJSON(w, http.StatusOK, map[string]any{
		"object": "list", "data": data, "has_more": false,
		"first_id": models[0], "last_id": models[len(models)-1],
	})
}
