package acp

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/ensemblework/ensemble/engines"
)

// tool is what the agent has said so far about one tool call: the tool_call and every
// tool_call_update after it, merged.
type tool struct {
	id       string
	title    string
	kind     acpsdk.ToolKind
	rawInput any
	// shown is rawInput as the session's updates last gave it, not a permission request: what the
	// trace records, the same however the two interleave.
	shown     any
	rawOutput any
	locations []acpsdk.ToolCallLocation
	content   []acpsdk.ToolCallContent
	status    acpsdk.ToolCallStatus
	seen      bool // in the client's order
	started   bool
	ended     bool
}

// awaitsCommand: a command whose command has not come yet. OpenCode's first word on a command is
// its folder alone ({"cwd":…}) and the command follows in an update; the call's start waits for
// it, so the trace records the command it ran.
func (t *tool) awaitsCommand() bool {
	in, _ := t.shown.(map[string]any)
	if t.kind != acpsdk.ToolKindExecute || t.done() || len(in) == 0 {
		return false
	}
	return command(in["command"]) == "" && command(in["cmd"]) == "" && backtick.FindStringSubmatch(t.title) == nil
}

func (t *tool) done() bool {
	return t.status == acpsdk.ToolCallStatusCompleted || t.status == acpsdk.ToolCallStatusFailed
}

func (t *tool) merge(title *string, kind *acpsdk.ToolKind, status *acpsdk.ToolCallStatus, rawInput, rawOutput any, locs []acpsdk.ToolCallLocation, content []acpsdk.ToolCallContent) {
	if title != nil && *title != "" {
		t.title = *title
	}
	if kind != nil && *kind != "" {
		t.kind = *kind
	}
	if status != nil && *status != "" {
		t.status = *status
	}
	if !emptyRaw(rawInput) {
		t.rawInput = rawInput
	}
	if !emptyRaw(rawOutput) {
		t.rawOutput = rawOutput
	}
	if len(locs) > 0 {
		t.locations = locs
	}
	if len(content) > 0 {
		t.content = content
	}
}

func emptyRaw(v any) bool {
	if v == nil {
		return true
	}
	if m, ok := v.(map[string]any); ok && len(m) == 0 {
		return true
	}
	return false
}

// name is the tool's name in events and for the judge: an MCP tool as mcp__server__tool, another
// tool by its ACP kind ("execute", "edit", …), or its title when it has no kind.
func (t *tool) name() string {
	kind := t.effectiveKind()
	if server, name, ok := mcpName(t.title); ok && (kind == "" || kind == acpsdk.ToolKindOther) {
		return "mcp__" + server + "__" + name
	}
	if kind != "" && kind != acpsdk.ToolKindOther {
		return string(kind)
	}
	if t.title != "" {
		return t.title
	}
	return "tool"
}

// effectiveKind is the call's kind, or "execute" for a call the agent has not given a kind yet
// that carries a command. The ACP SDK handles a permission request beside, not after, the
// notifications before it, so the request can come before the tool_call that says its kind; a
// command read as an unknown tool would slip past the judge's shell rules.
func (t *tool) effectiveKind() acpsdk.ToolKind {
	if t.kind != "" && t.kind != acpsdk.ToolKindOther {
		return t.kind
	}
	if _, _, ok := mcpName(t.title); ok {
		return t.kind
	}
	in, _ := t.rawInput.(map[string]any)
	if command(in["command"]) != "" || command(in["cmd"]) != "" {
		return acpsdk.ToolKindExecute
	}
	return t.kind
}

func (t *tool) input() json.RawMessage {
	in := t.shown
	if in == nil {
		in = t.rawInput
	}
	if in == nil {
		return nil
	}
	b, err := json.Marshal(in)
	if err != nil {
		return nil
	}
	return b
}

var (
	mcpColon  = regexp.MustCompile(`^([A-Za-z0-9_.-]+): ([A-Za-z0-9_.-]+)$`)
	mcpDunder = regexp.MustCompile(`^mcp__([A-Za-z0-9_.-]+?)__([A-Za-z0-9_.-]+)$`)
	mcpDash   = regexp.MustCompile(`^([A-Za-z0-9_.]+)-([A-Za-z0-9_.-]+)$`)
	// Gemini CLI titles an MCP call "tool (server MCP Server)", the tool first.
	mcpGemini = regexp.MustCompile(`^([A-Za-z0-9_.-]+) \(([A-Za-z0-9_.-]+) MCP Server\)$`)
	backtick  = regexp.MustCompile("`([^`]+)`")
)

// mcpName reads an MCP tool's server and name from a title: "server: tool", "mcp__server__tool",
// "server-tool" (spec 003 §3.3, acpCalls), or Gemini CLI's "tool (server MCP Server)".
func mcpName(title string) (server, name string, ok bool) {
	title = strings.TrimSpace(title)
	if m := mcpGemini.FindStringSubmatch(title); m != nil {
		return m[2], m[1], true
	}
	for _, re := range []*regexp.Regexp{mcpColon, mcpDunder, mcpDash} {
		if m := re.FindStringSubmatch(title); m != nil {
			return m[1], m[2], true
		}
	}
	return "", "", false
}

// call reads the tool call for the judge (spec 003 §3.3, acpCalls): a command from
// rawInput.command as a string or argv, or a backticked title; paths from locations, a diff's path
// and rawInput; an MCP tool by its server and name.
func (t *tool) call(folder string) engines.ToolCall {
	in, _ := t.rawInput.(map[string]any)
	c := engines.ToolCall{ID: t.id, Tool: t.name(), Input: t.input(), Cwd: folder}
	if cwd, ok := in["cwd"].(string); ok && cwd != "" {
		c.Cwd = cwd
	}
	abs := func(p string) string {
		if p == "" || filepath.IsAbs(p) {
			return p
		}
		return filepath.Join(c.Cwd, p)
	}
	var paths []string
	add := func(p string) {
		p = abs(p)
		if p == "" {
			return
		}
		for _, q := range paths {
			if q == p {
				return
			}
		}
		paths = append(paths, p)
	}
	for _, l := range t.locations {
		add(l.Path)
	}
	for _, ct := range t.content {
		if ct.Diff != nil {
			add(ct.Diff.Path)
		}
	}
	for _, k := range []string{"file_path", "filePath", "filepath", "fileName", "path", "absolute_path", "notebook_path"} {
		if s, ok := in[k].(string); ok {
			add(s)
		}
	}
	if ps, ok := in["paths"].([]any); ok {
		for _, p := range ps {
			if s, ok := p.(string); ok {
				add(s)
			}
		}
	}
	switch t.effectiveKind() {
	case acpsdk.ToolKindExecute:
		c.Kind = "shell"
		c.Command = command(in["command"])
		if c.Command == "" {
			c.Command = command(in["cmd"])
		}
		if c.Command == "" {
			if m := backtick.FindStringSubmatch(t.title); m != nil {
				c.Command = m[1]
			} else {
				c.Command = t.title
			}
		}
		// The folder a command runs in is not a path it touches.
		paths = without(paths, c.Cwd, folder)
	case acpsdk.ToolKindEdit, acpsdk.ToolKindDelete, acpsdk.ToolKindMove:
		c.Kind = "edit"
	case acpsdk.ToolKindRead:
		c.Kind = "read"
	case acpsdk.ToolKindSearch:
		c.Kind = "search"
	case acpsdk.ToolKindFetch:
		c.Kind = "fetch"
		for _, k := range []string{"url", "uri"} {
			if s, ok := in[k].(string); ok {
				c.URL = s
			}
		}
		if c.URL == "" {
			c.URL = t.title
		}
		paths = nil
	default:
		c.Kind = "mcp"
	}
	c.Paths = paths
	return c
}

func without(paths []string, drop ...string) []string {
	var out []string
	for _, p := range paths {
		keep := true
		for _, d := range drop {
			if d != "" && filepath.Clean(p) == filepath.Clean(d) {
				keep = false
			}
		}
		if keep {
			out = append(out, p)
		}
	}
	return out
}

// command reads a command given as a string or an argv; a shell's -c/-lc script is the command.
func command(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case []any:
		var argv []string
		for _, a := range x {
			s, ok := a.(string)
			if !ok {
				return ""
			}
			argv = append(argv, s)
		}
		if n := len(argv); n == 3 && (argv[1] == "-c" || argv[1] == "-lc") && isShell(argv[0]) {
			return argv[2]
		}
		return strings.Join(argv, " ")
	}
	return ""
}

func isShell(p string) bool {
	switch filepath.Base(p) {
	case "sh", "bash", "zsh", "dash", "fish":
		return true
	}
	return false
}

// output is the text of a finished tool call: its text content, else its rawOutput.
func (t *tool) output() string {
	var parts []string
	for _, ct := range t.content {
		switch {
		case ct.Content != nil && ct.Content.Content.Text != nil:
			parts = append(parts, ct.Content.Content.Text.Text)
		case ct.Diff != nil:
			parts = append(parts, "edited "+ct.Diff.Path)
		case ct.Terminal != nil:
			parts = append(parts, "terminal "+ct.Terminal.TerminalId)
		}
	}
	if len(parts) > 0 {
		return strings.Join(parts, "\n")
	}
	switch o := t.rawOutput.(type) {
	case nil:
		return ""
	case string:
		return o
	case map[string]any:
		for _, k := range []string{"output", "stdout", "formatted_output", "content"} {
			if s, ok := o[k].(string); ok {
				return s
			}
		}
	}
	b, _ := json.Marshal(t.rawOutput)
	return string(b)
}

// describe names a refused call in the follow-up prompt.
func describe(c engines.ToolCall) string {
	switch {
	case c.Command != "":
		return fmt.Sprintf("`%s`", c.Command)
	case c.URL != "":
		return c.Tool + " " + c.URL
	case len(c.Paths) > 0:
		return c.Tool + " " + strings.Join(c.Paths, ", ")
	}
	return c.Tool
}
