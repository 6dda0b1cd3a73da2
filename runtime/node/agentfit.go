package node

import (
	"context"
	"fmt"
	"regexp"
	"strings"

	"github.com/ensemblework/ensemble/runtime/problem"
)

// Which agent can run which model (spec 002 §8.1): an agent that runs one maker's models refuses
// another's, before any run is made; agents that run several makers' take any.
var (
	makerOf = []struct {
		maker string
		re    *regexp.Regexp
	}{
		{"Anthropic", regexp.MustCompile(`(?i)^(claude|opus|sonnet|haiku|opusplan)\b|claude`)},
		{"OpenAI", regexp.MustCompile(`(?i)^(gpt|o[134]\b|o[134]-|codex|chatgpt)`)},
		{"Google", regexp.MustCompile(`(?i)^gemini|gemma`)},
		{"xAI", regexp.MustCompile(`(?i)^grok`)},
	}
	// oneMaker are the agents that run only one maker's models, with their names.
	oneMaker = map[string]struct{ maker, name string }{
		"claude": {"Anthropic", "Claude Code"},
		"codex":  {"OpenAI", "Codex"},
		"gemini": {"Google", "Gemini CLI"},
		"grok":   {"xAI", "Grok Build"},
	}
	// anyMaker are the agents that run several makers' models.
	anyMaker = []string{"copilot", "cursor", "opencode", "antigravity"}
)

// modelMaker is the maker a model's name shows, "" when it shows none.
func modelMaker(model string) string {
	for _, m := range makerOf {
		if m.re.MatchString(strings.TrimSpace(model)) {
			return m.maker
		}
	}
	return ""
}

// agentsFor are the agents that run a maker's models: its own, then those that run any.
func agentsFor(maker string) []string {
	var out []string
	for id, a := range oneMaker {
		if a.maker == maker {
			out = append(out, id)
		}
	}
	return append(out, anyMaker...)
}

// modelFit refuses a model the agent cannot run, naming the agents here that can (ready says
// whether one can run now; nil names them all).
func modelFit(ctx context.Context, agent, model string, ready func(context.Context, string) error) error {
	a, ok := oneMaker[agent]
	maker := modelMaker(model)
	if !ok || model == "" || maker == "" || maker == a.maker {
		return nil
	}
	var can []string
	for _, id := range agentsFor(maker) {
		if ready == nil || ready(ctx, id) == nil {
			can = append(can, id)
		}
	}
	msg := fmt.Sprintf("%s runs %s's models, not %s (%s's).", a.name, a.maker, model, maker)
	if len(can) > 0 {
		msg += " Name an agent that runs it: " + strings.Join(can, ", ") + "."
	} else {
		msg += " No agent here that runs it is ready; pick a " + a.maker + " model for " + a.name + "."
	}
	return problem.Invalid("%s", msg)
}
