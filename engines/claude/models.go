package claude

import (
	"slices"
	"strings"

	"github.com/ensemblework/ensemble/engines"
)

// Claude Code lists no models over its protocol before a session starts, so
// the catalog is Ensemble's own (spec 003 §3.2, CLAUDE_MODELS), read from the
// model table baked into Claude Code 2.1.197 for Anthropic's own API: each
// model's capabilities "effort", "xhigh_effort" and "max_effort" give its
// levels, default_effort its default ("high" when it names none), a
// supports_1m_beta model with a 200K window takes the 1M one as "<model>[1m]",
// a native_1m model has only the 1M window, and fast mode is for the models
// with "fast_mode" (Opus 4.7 and 4.8).

// The thinking levels `claude --effort` takes, lowest first.
var (
	effortsAll   = []string{"low", "medium", "high", "xhigh", "max"}
	effortsNoXhi = []string{"low", "medium", "high", "max"}
)

// Context windows in tokens.
const (
	window200K = 200_000
	window1M   = 1_000_000
)

// longSuffix asks Claude Code for a model's 1M window.
const longSuffix = "[1m]"

// models is Claude Code 2.1.197's catalog: its aliases first, then full ids.
var models = []engines.ModelInfo{
	{ID: "opus", Name: "Opus (latest: Opus 4.8)", Efforts: effortsAll, DefaultEffort: "high", Context: window1M, Fast: true},
	{ID: "sonnet", Name: "Sonnet (latest: Sonnet 5)", Efforts: effortsAll, DefaultEffort: "high", Context: window1M},
	{ID: "haiku", Name: "Haiku (latest: Haiku 4.5)", Context: window200K},
	{ID: "fable", Name: "Fable (latest: Fable 5)", Efforts: effortsAll, DefaultEffort: "high", Context: window1M},
	{ID: "claude-opus-4-8", Name: "Opus 4.8", Default: true, Efforts: effortsAll, DefaultEffort: "high", Context: window1M, Fast: true},
	{ID: "claude-opus-4-7", Name: "Opus 4.7", Efforts: effortsAll, DefaultEffort: "xhigh", Context: window1M, Fast: true},
	{ID: "claude-opus-4-6", Name: "Opus 4.6", Efforts: effortsNoXhi, DefaultEffort: "high", Context: window200K, LongContext: window1M},
	{ID: "claude-fable-5", Name: "Fable 5", Efforts: effortsAll, DefaultEffort: "high", Context: window1M},
	{ID: "claude-sonnet-5", Name: "Sonnet 5", Efforts: effortsAll, DefaultEffort: "high", Context: window1M},
	{ID: "claude-sonnet-4-6", Name: "Sonnet 4.6", Efforts: effortsNoXhi, DefaultEffort: "high", Context: window200K, LongContext: window1M},
	{ID: "claude-sonnet-4-5", Name: "Sonnet 4.5", Context: window200K, LongContext: window1M},
	{ID: "claude-haiku-4-5", Name: "Haiku 4.5", Context: window200K},
}

// catalog is a copy of the table and its ids, for a Detection.
func catalog() ([]engines.ModelInfo, []string) {
	out := make([]engines.ModelInfo, len(models))
	ids := make([]string, len(models))
	for i, m := range models {
		m.Vendor = "Anthropic"
		m.Efforts = slices.Clone(m.Efforts) // a Detection is the caller's to keep
		out[i], ids[i] = m, m.ID
	}
	return out, ids
}

// modelArg is --model's value for spec: the long window as Claude Code takes
// it, a "[1m]" suffix, when asked for on a named model.
func modelArg(spec engines.Spec) string {
	m := spec.Model
	if m == "" || spec.Context != engines.ContextLong || strings.HasSuffix(strings.ToLower(m), longSuffix) {
		return m
	}
	return m + longSuffix
}
