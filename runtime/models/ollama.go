package models

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// OllamaURL is where a local Ollama listens by default. Its OpenAI-compatible API is under /v1.
const OllamaURL = "http://127.0.0.1:11434"

// ollamaTimeout is how long detection waits: a local server answers in milliseconds, and Settings
// must not hang on a computer without one.
const ollamaTimeout = time.Second

// DetectOllama asks the Ollama at baseURL (OllamaURL when "") for its installed models
// (GET /api/tags). An error means none answers there.
func DetectOllama(ctx context.Context, baseURL string) ([]string, error) {
	if baseURL == "" {
		baseURL = OllamaURL
	}
	baseURL = strings.TrimSuffix(strings.TrimSuffix(baseURL, "/"), "/v1")
	ctx, cancel := context.WithTimeout(ctx, ollamaTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, baseURL+"/api/tags", nil)
	if err != nil {
		return nil, fmt.Errorf("ollama: %w", err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("ollama: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("ollama: %s answered %s", baseURL, resp.Status)
	}
	var tags struct {
		Models []struct {
			Name  string `json:"name"`
			Model string `json:"model"`
		} `json:"models"`
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 4<<20)).Decode(&tags); err != nil {
		return nil, fmt.Errorf("ollama: %s/api/tags: %w", baseURL, err)
	}
	names := []string{}
	for _, m := range tags.Models {
		n := m.Name
		if n == "" {
			n = m.Model
		}
		if n != "" {
			names = append(names, n)
		}
	}
	return names, nil
}
