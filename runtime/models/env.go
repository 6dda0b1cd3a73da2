package models

import (
	"fmt"
	"os"
	"time"
)

// FromEnv returns the provider named ("anthropic", the default, or "openai") with its key from
// ANTHROPIC_API_KEY or OPENAI_API_KEY. baseURL overrides ANTHROPIC_BASE_URL or OPENAI_BASE_URL.
// A zero timeout means TimeoutFromEnv.
func FromEnv(provider, baseURL string, timeout time.Duration) (Provider, error) {
	if timeout <= 0 {
		timeout = TimeoutFromEnv()
	}
	switch provider {
	case "", "anthropic":
		if baseURL == "" {
			baseURL = os.Getenv("ANTHROPIC_BASE_URL")
		}
		key := os.Getenv("ANTHROPIC_API_KEY")
		if key == "" {
			return nil, fmt.Errorf("Anthropic needs a key: set ANTHROPIC_API_KEY.")
		}
		return NewAnthropic(key, baseURL, timeout), nil
	case "openai":
		if baseURL == "" {
			baseURL = os.Getenv("OPENAI_BASE_URL")
		}
		key := os.Getenv("OPENAI_API_KEY")
		if key == "" && baseURL == "" {
			return nil, fmt.Errorf("OpenAI needs a key: set OPENAI_API_KEY, or a base URL for a compatible server.")
		}
		return NewOpenAI(key, baseURL, timeout), nil
	}
	return nil, fmt.Errorf("Provider %q is not one of anthropic or openai.", provider)
}
