package models

import (
	"fmt"
	"slices"
	"strings"
)

// effortWay is how a model family takes an effort level.
type effortWay int

const (
	// effortNone: the model takes no effort level.
	effortNone effortWay = iota
	// effortLevel: the level goes as it is, as Anthropic's output_config.effort or OpenAI's
	// reasoning effort.
	effortLevel
	// effortBudget: Anthropic extended thinking, the level turned into a thinking budget
	// (thinkingBudget).
	effortBudget
)

// family is the models of one provider whose ids start with prefix (followed by nothing, "-" or a
// date), and the effort levels they take, lowest first.
type family struct {
	provider string
	prefix   string
	way      effortWay
	levels   []string
}

var (
	threeLevels    = []string{"low", "medium", "high"}
	anthropicFour  = []string{"low", "medium", "high", "max"}
	anthropicFive  = []string{"low", "medium", "high", "xhigh", "max"}
	gpt5Levels     = []string{"minimal", "low", "medium", "high"}
	gpt51Levels    = []string{"none", "low", "medium", "high"}
	gpt52Levels    = []string{"none", "low", "medium", "high", "xhigh"}
	codexMaxLevels = []string{"low", "medium", "high", "xhigh"}
)

// catalog is what Ensemble knows of each model family's effort levels. The longest prefix that
// matches wins, so "gpt-5-chat-latest" is not "gpt-5". A model it does not know takes no effort:
// sending one could spend on a request the provider refuses, or be ignored without a word.
//
// Anthropic: output_config.effort from Opus 4.5 (low–high), Opus and Sonnet 4.6 (to max), Opus 4.7
// and the 5 families (to xhigh and max); the models before with extended thinking get a thinking
// budget per level; Claude 3.5 and older think not at all. OpenAI: the o-series and GPT-5 models
// reason (GPT-5 from minimal, 5.1 from none, 5.2 to xhigh); GPT-4o, GPT-4.1 and the chat-latest
// aliases do not.
var catalog = []family{
	{"anthropic", "claude-opus-4-5", effortLevel, threeLevels},
	{"anthropic", "claude-opus-4-6", effortLevel, anthropicFour},
	{"anthropic", "claude-sonnet-4-6", effortLevel, anthropicFour},
	{"anthropic", "claude-opus-4-7", effortLevel, anthropicFive},
	{"anthropic", "claude-opus-4-8", effortLevel, anthropicFive},
	{"anthropic", "claude-opus-5", effortLevel, anthropicFive},
	{"anthropic", "claude-sonnet-5", effortLevel, anthropicFive},
	{"anthropic", "claude-fable-5", effortLevel, anthropicFive},
	{"anthropic", "claude-mythos-5", effortLevel, anthropicFive},
	{"anthropic", "claude-3-7-sonnet", effortBudget, threeLevels},
	{"anthropic", "claude-sonnet-4", effortBudget, threeLevels}, // also claude-sonnet-4-5
	{"anthropic", "claude-opus-4", effortBudget, threeLevels},   // also claude-opus-4-1
	{"anthropic", "claude-haiku-4-5", effortBudget, threeLevels},
	{"anthropic", "claude-3-5-haiku", effortNone, nil},
	{"anthropic", "claude-3-5-sonnet", effortNone, nil},
	{"anthropic", "claude-3-haiku", effortNone, nil},
	{"anthropic", "claude-3-opus", effortNone, nil},

	{"openai", "o1", effortLevel, threeLevels},
	{"openai", "o1-pro", effortLevel, threeLevels},
	{"openai", "o1-mini", effortNone, nil},
	{"openai", "o1-preview", effortNone, nil},
	{"openai", "o3", effortLevel, threeLevels},
	{"openai", "o3-mini", effortLevel, threeLevels},
	{"openai", "o3-pro", effortLevel, threeLevels},
	{"openai", "o4-mini", effortLevel, threeLevels},
	{"openai", "o3-deep-research", effortLevel, []string{"medium"}},
	{"openai", "o4-mini-deep-research", effortLevel, []string{"medium"}},
	{"openai", "gpt-5", effortLevel, gpt5Levels},
	{"openai", "gpt-5-mini", effortLevel, gpt5Levels},
	{"openai", "gpt-5-nano", effortLevel, gpt5Levels},
	{"openai", "gpt-5-codex", effortLevel, threeLevels},
	{"openai", "gpt-5-pro", effortLevel, []string{"high"}},
	{"openai", "gpt-5.1", effortLevel, gpt51Levels},
	{"openai", "gpt-5.1-codex", effortLevel, threeLevels},
	{"openai", "gpt-5.1-codex-max", effortLevel, codexMaxLevels},
	{"openai", "gpt-5.2", effortLevel, gpt52Levels},
	{"openai", "gpt-5.2-pro", effortLevel, []string{"medium", "high", "xhigh"}},
	{"openai", "gpt-5-chat-latest", effortNone, nil},
	{"openai", "gpt-5.1-chat-latest", effortNone, nil},
	{"openai", "gpt-5.2-chat-latest", effortNone, nil},
	{"openai", "gpt-4o", effortNone, nil},
	{"openai", "chatgpt-4o-latest", effortNone, nil},
	{"openai", "gpt-4.1", effortNone, nil},
	{"openai", "gpt-4", effortNone, nil}, // also gpt-4-turbo
	{"openai", "gpt-3.5-turbo", effortNone, nil},
}

// lookup finds model's family at provider ("" is anthropic). A model named with its vendor, as
// routers name them ("openai/gpt-5"), is looked up by the part after the last "/".
func lookup(provider, model string) (family, bool) {
	if provider == "" {
		provider = "anthropic"
	}
	if provider == "ollama" {
		return family{}, false // local models: their servers take no effort
	}
	m := strings.ToLower(strings.TrimSpace(model))
	m = m[strings.LastIndex(m, "/")+1:]
	var best family
	found := false
	for _, f := range catalog {
		if f.provider != provider || !strings.HasPrefix(m, f.prefix) {
			continue
		}
		if rest := m[len(f.prefix):]; rest != "" && rest[0] != '-' && rest[0] != '@' {
			continue // "gpt-5.1" is not "gpt-5"
		}
		if !found || len(f.prefix) > len(best.prefix) {
			best, found = f, true
		}
	}
	return best, found
}

// CheckEffort says whether model at provider ("anthropic", "openai" or "ollama") takes effort,
// before anything is sent. An empty effort (the provider's default) is always taken. The error is
// one sentence naming the model and the levels it takes.
func CheckEffort(provider, model, effort string) error {
	effort = strings.TrimSpace(effort)
	if effort == "" {
		return nil
	}
	f, ok := lookup(provider, model)
	switch {
	case !ok:
		return fmt.Errorf("Ensemble does not know which effort levels %s takes, so it sends none: leave effort empty for it.", model)
	case f.way == effortNone:
		return fmt.Errorf("%s takes no effort level: leave effort empty for it.", model)
	case !slices.Contains(f.levels, effort):
		return fmt.Errorf("%s takes effort %s, not %q.", model, orList(f.levels), effort)
	}
	return nil
}

// EffortLevels returns the effort levels model at provider takes, lowest first; none when it takes
// none or Ensemble does not know it.
func EffortLevels(provider, model string) []string {
	f, ok := lookup(provider, model)
	if !ok {
		return nil
	}
	return slices.Clone(f.levels)
}

// thinkingBudget is the extended-thinking budget, in tokens, for a level of a model that thinks
// with a budget. Opus 4 writes at most 32,000 tokens, so high and the default reply (8,192) must
// fit under that.
func thinkingBudget(level string) int64 {
	switch level {
	case "low":
		return 1024 // the least Anthropic takes
	case "medium":
		return 4096
	}
	return 16384
}

// orList says "a, b or c".
func orList(l []string) string {
	if len(l) <= 1 {
		return strings.Join(l, "")
	}
	return strings.Join(l[:len(l)-1], ", ") + " or " + l[len(l)-1]
}
