package models

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"strings"
	"time"
)

// Keys finds a provider's key saved on this computer (the secrets store's "provider:<id>").
type Keys interface {
	// ProviderKey returns the saved key for provider ("anthropic", "openai") and whether there is
	// one. Its error never holds the key.
	ProviderKey(ctx context.Context, provider string) (string, bool, error)
}

// Source makes providers with their keys: the one saved in Settings first, then the environment.
type Source struct {
	// Keys are the saved keys; nil looks only in the environment.
	Keys Keys
	// Getenv reads the environment; os.Getenv when nil.
	Getenv func(string) string
	// Timeout is how long one call waits; TimeoutFromEnv() when zero.
	Timeout time.Duration
}

// KeyFrom says where provider's key would come from: "settings", "environment" or "" (none).
type KeyFrom string

const (
	KeyFromSettings    KeyFrom = "settings"
	KeyFromEnvironment KeyFrom = "environment"
	KeyFromNone        KeyFrom = ""
)

// envKey is the environment variable each keyed provider reads.
var envKey = map[string]string{"anthropic": "ANTHROPIC_API_KEY", "openai": "OPENAI_API_KEY"}

// lookupTimeout bounds reading a saved key; it is one indexed SQLite row.
const lookupTimeout = 5 * time.Second

// Key returns provider's key and where it came from. A saved key wins over the environment, so
// what the person typed in Settings is what is used.
func (s Source) Key(ctx context.Context, provider string) (string, KeyFrom, error) {
	env, ok := envKey[provider]
	if !ok {
		return "", KeyFromNone, nil
	}
	if s.Keys != nil {
		k, found, err := s.Keys.ProviderKey(ctx, provider)
		if err != nil {
			return "", KeyFromNone, fmt.Errorf("read the saved %s key: %w", provider, err)
		}
		if found && k != "" {
			return k, KeyFromSettings, nil
		}
	}
	if k := s.getenv(env); k != "" {
		return k, KeyFromEnvironment, nil
	}
	return "", KeyFromNone, nil
}

func (s Source) getenv(name string) string {
	if s.Getenv != nil {
		return s.Getenv(name)
	}
	return os.Getenv(name)
}

// Provider returns the provider named ("anthropic", the default, "openai" or "ollama") at baseURL
// ("" for its default). It has the shape of the assistant's Config.Providers.
func (s Source) Provider(provider, baseURL string) (Provider, error) {
	timeout := s.Timeout
	if timeout <= 0 {
		timeout = TimeoutFromEnv()
	}
	ctx, cancel := context.WithTimeout(context.Background(), lookupTimeout)
	defer cancel()
	switch provider {
	case "", "anthropic":
		if baseURL == "" {
			baseURL = s.getenv("ANTHROPIC_BASE_URL")
		}
		key, _, err := s.Key(ctx, "anthropic")
		if err != nil {
			return nil, err
		}
		if key == "" {
			return nil, fmt.Errorf("Anthropic needs a key: %s.", s.howToAdd("anthropic"))
		}
		return NewAnthropic(key, baseURL, timeout), nil
	case "openai":
		if baseURL == "" {
			baseURL = s.getenv("OPENAI_BASE_URL")
		}
		key, _, err := s.Key(ctx, "openai")
		if err != nil {
			return nil, err
		}
		if key == "" && baseURL == "" {
			return nil, fmt.Errorf("OpenAI needs a key: %s, or a base URL for a compatible server.", s.howToAdd("openai"))
		}
		// OpenAI's own API gets the Responses API, where its reasoning models take effort and
		// tools together. Any other base URL is a compatible server (LM Studio, vLLM, a router …),
		// and what those speak is Chat Completions.
		if openAIsOwn(baseURL) {
			return NewResponses(key, baseURL, timeout), nil
		}
		return NewOpenAI(key, baseURL, timeout), nil
	case "ollama":
		if baseURL == "" {
			baseURL = OllamaURL + "/v1"
		}
		// Ollama takes no key; its OpenAI-compatible API wants some bearer value all the same. It
		// stays on Chat Completions, which every Ollama speaks.
		return NewOpenAI("ollama", baseURL, timeout), nil
	}
	return nil, fmt.Errorf("Provider %q is not one of anthropic, openai or ollama.", provider)
}

// openAIsOwn reports whether baseURL is OpenAI's own API: "" (the SDK's default) or an address at
// api.openai.com.
func openAIsOwn(baseURL string) bool {
	if baseURL == "" {
		return true
	}
	u, err := url.Parse(baseURL)
	return err == nil && strings.EqualFold(u.Hostname(), "api.openai.com")
}

// howToAdd says where a key can be given.
func (s Source) howToAdd(provider string) string {
	if s.Keys == nil {
		return "set " + envKey[provider]
	}
	return fmt.Sprintf("add one in Settings, run `ensemble secrets set-key %s`, or set %s", provider, envKey[provider])
}
