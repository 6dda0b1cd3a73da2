package claude

import "testing"

func TestContextWindow(t *testing.T) {
	opus := modelUsage{InputTokens: 900, OutputTokens: 300, ContextWindow: 1_000_000}
	haiku := modelUsage{InputTokens: 50, OutputTokens: 10, ContextWindow: 200_000}
	for _, tc := range []struct {
		name  string
		usage map[string]modelUsage
		model string
		want  int
	}{
		{"none reported", nil, "claude-opus-4-8", 0},
		{"the init model", map[string]modelUsage{"claude-opus-4-8": opus, "claude-haiku-4-5": haiku}, "claude-opus-4-8", 1_000_000},
		{"the init model's [1m] tag", map[string]modelUsage{"claude-opus-4-8": opus, "claude-haiku-4-5": haiku}, "claude-opus-4-8[1m]", 1_000_000},
		{"the small model named", map[string]modelUsage{"claude-opus-4-8": opus, "claude-haiku-4-5": haiku}, "claude-haiku-4-5", 200_000},
		{"no init model: the biggest spender", map[string]modelUsage{"claude-opus-4-8": opus, "claude-haiku-4-5": haiku}, "", 1_000_000},
	} {
		if got := contextWindow(tc.usage, tc.model); got != tc.want {
			t.Errorf("%s: contextWindow = %d, want %d", tc.name, got, tc.want)
		}
	}
}
