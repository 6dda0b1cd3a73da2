package models

import "time"

// FromEnv returns the provider named ("anthropic", the default, "openai" or "ollama") with its key
// from ANTHROPIC_API_KEY or OPENAI_API_KEY. baseURL overrides ANTHROPIC_BASE_URL or OPENAI_BASE_URL
// (Ollama's is http://127.0.0.1:11434/v1). A zero timeout means TimeoutFromEnv. Callers with a
// secrets store use [Source], which looks there first.
func FromEnv(provider, baseURL string, timeout time.Duration) (Provider, error) {
	return Source{Timeout: timeout}.Provider(provider, baseURL)
}
