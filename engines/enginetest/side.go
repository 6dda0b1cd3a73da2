package enginetest

import "strings"

// Side request kinds, as [Classify] names them.
const (
	// SideJSON is a JSON-mode request (Gemini CLI's model router and
	// next-speaker check): answered with an object filled from its schema.
	SideJSON = "json"
	// SideTitle is a session-title request (opencode, Claude Code).
	SideTitle = "title"
	// SideTopic is Claude Code's new-topic check.
	SideTopic = "topic"
	// SideQuota is Claude Code's one-token "quota" probe.
	SideQuota = "quota"
)

// Classify tells a CLI's side request from its agent loop by shape, and
// names its kind ("" for the agent loop). The CLIs' agent loops always offer
// tools; the side requests below offer none, except Gemini CLI's JSON-mode
// calls, which are told apart by their response schema.
//
//   - Gemini CLI: JSON-mode requests (responseMimeType application/json):
//     the model router before each prompt with model "auto", and the
//     next-speaker check.
//   - opencode: a title call without tools before the agent call ("You are
//     a title generator").
//   - Claude Code 2.1: a title call before the first turn (no tools, a
//     system prompt asking for a "sentence-case title", a JSON schema
//     {"title"} in output_config) unless
//     CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC is set; older versions' "quota"
//     probe and topic check.
//
// Any other request without tools that asks for JSON is [SideJSON].
func Classify(r *Request) string {
	if len(r.Tools) > 0 {
		if len(r.JSONSchema) > 0 && r.API == Gemini {
			return SideJSON
		}
		return ""
	}
	sys := strings.ToLower(r.System)
	last := strings.ToLower(strings.TrimSpace(r.LastUserText()))
	switch {
	case r.API == Anthropic && last == "quota":
		return SideQuota
	case strings.Contains(sys, "new conversation topic") || strings.Contains(sys, "isnewtopic"):
		return SideTopic
	case strings.Contains(sys, "title"):
		return SideTitle
	case len(r.JSONSchema) > 0:
		return SideJSON
	}
	return ""
}
