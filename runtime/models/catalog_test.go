package models

import (
	"slices"
	"testing"
)

func TestCheckEffort(t *testing.T) {
	for _, tc := range []struct {
		provider, model, effort string
		want                    string // "" when taken
	}{
		{"anthropic", "claude-haiku-4-5", "", ""},
		{"ollama", "llama3.2", "", ""},
		{"anthropic", "claude-sonnet-4-5-20250929", "high", ""},
		{"", "claude-3-7-sonnet-latest", "low", ""},
		{"anthropic", "claude-opus-4-6", "max", ""},
		{"anthropic", "claude-opus-4-7", "xhigh", ""},
		{"anthropic", "claude-opus-4-5@20251101", "medium", ""},
		{"anthropic", "claude-opus-4-5", "max", `claude-opus-4-5 takes effort low, medium or high, not "max".`},
		{"anthropic", "claude-sonnet-4-5", "max", `claude-sonnet-4-5 takes effort low, medium or high, not "max".`},
		{"anthropic", "claude-3-5-haiku-latest", "low", "claude-3-5-haiku-latest takes no effort level: leave effort empty for it."},
		{"anthropic", "claude-next", "high", "Ensemble does not know which effort levels claude-next takes, so it sends none: leave effort empty for it."},
		{"openai", "gpt-5", "minimal", ""},
		{"openai", "gpt-5-mini-2025-08-07", "high", ""},
		{"openai", "openai/gpt-5", "low", ""},
		{"openai", "o3", "medium", ""},
		{"openai", "o4-mini", "minimal", `o4-mini takes effort low, medium or high, not "minimal".`},
		{"openai", "gpt-5.1", "none", ""},
		{"openai", "gpt-5.1", "minimal", `gpt-5.1 takes effort none, low, medium or high, not "minimal".`},
		{"openai", "gpt-5.2", "xhigh", ""},
		{"openai", "gpt-5-pro", "low", `gpt-5-pro takes effort high, not "low".`},
		{"openai", "gpt-5-chat-latest", "low", "gpt-5-chat-latest takes no effort level: leave effort empty for it."},
		{"openai", "gpt-4o", "high", "gpt-4o takes no effort level: leave effort empty for it."},
		{"openai", "gpt-4.1-mini", "low", "gpt-4.1-mini takes no effort level: leave effort empty for it."},
		{"openai", "gpt-4o-mini", "low", "gpt-4o-mini takes no effort level: leave effort empty for it."},
		{"openai", "claude-opus-4-6", "high", "Ensemble does not know which effort levels claude-opus-4-6 takes, so it sends none: leave effort empty for it."},
		{"ollama", "gpt-oss:20b", "high", "Ensemble does not know which effort levels gpt-oss:20b takes, so it sends none: leave effort empty for it."},
		{"openai", "qwen3-coder", "low", "Ensemble does not know which effort levels qwen3-coder takes, so it sends none: leave effort empty for it."},
	} {
		t.Run(tc.provider+"/"+tc.model+"/"+tc.effort, func(t *testing.T) {
			err := CheckEffort(tc.provider, tc.model, tc.effort)
			got := ""
			if err != nil {
				got = err.Error()
			}
			if got != tc.want {
				t.Fatalf("got %q, want %q", got, tc.want)
			}
		})
	}
}

func TestEffortLevels(t *testing.T) {
	for _, tc := range []struct {
		provider, model string
		want            []string
	}{
		{"anthropic", "claude-sonnet-4-6", []string{"low", "medium", "high", "max"}},
		{"anthropic", "claude-sonnet-4-20250514", []string{"low", "medium", "high"}},
		{"openai", "gpt-5-nano", []string{"minimal", "low", "medium", "high"}},
		{"openai", "gpt-4o", nil},
		{"ollama", "llama3.2", nil},
	} {
		if got := EffortLevels(tc.provider, tc.model); !slices.Equal(got, tc.want) {
			t.Errorf("EffortLevels(%q, %q) = %v, want %v", tc.provider, tc.model, got, tc.want)
		}
	}
}
