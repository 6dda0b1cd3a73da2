package node

import (
	"context"
	"errors"
	"strings"
	"testing"
)

func TestModelFit(t *testing.T) {
	ready := func(_ context.Context, agent string) error {
		if agent == "codex" || agent == "opencode" {
			return nil
		}
		return errors.New("not signed in")
	}
	for _, c := range []struct {
		agent, model string
		want         string // "" for no refusal
	}{
		{"claude", "claude-sonnet-4-5", ""},
		{"claude", "opus", ""},
		{"claude", "gpt-5", "Claude Code runs Anthropic's models, not gpt-5 (OpenAI's). Name an agent that runs it: codex, opencode."},
		{"codex", "gpt-5-codex", ""},
		{"codex", "o3", ""},
		{"codex", "claude-opus-4", "Codex runs OpenAI's models, not claude-opus-4 (Anthropic's). Name an agent that runs it: opencode."},
		{"gemini", "gemini-2.5-pro", ""},
		{"gemini", "gpt-5", "Gemini CLI runs Google's models"},
		{"copilot", "claude-sonnet-4", ""},
		{"opencode", "gpt-5", ""},
		{"claude", "my-local-model", ""}, // a name that shows no maker is the agent's to refuse
		{"", "gpt-5", ""},
	} {
		err := modelFit(context.Background(), c.agent, c.model, ready)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s with %s: refused: %v", c.agent, c.model, err)
		case c.want != "" && (err == nil || !strings.HasPrefix(err.Error(), c.want)):
			t.Errorf("%s with %s: %v, want %q", c.agent, c.model, err, c.want)
		}
	}
}
