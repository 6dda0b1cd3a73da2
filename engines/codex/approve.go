package codex

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ensemblework/ensemble/engines"
)

// steerTimeout bounds telling the model why a call was refused.
const steerTimeout = 10 * time.Second

// request answers one of Codex's requests.
func (s *session) request(ctx context.Context, method string, raw json.RawMessage) (any, error) {
	switch method {
	case "item/commandExecution/requestApproval":
		return s.approveCommand(ctx, raw)
	case "item/fileChange/requestApproval":
		return s.approveFileChange(ctx, raw)
	case "item/permissions/requestApproval":
		return s.approvePermissions(ctx, raw)
	case "item/tool/requestUserInput":
		return s.userInput(ctx, raw)
	case "mcpServer/elicitation/request":
		return s.elicit(ctx, raw)
	default:
		// Sign-in token refreshes, attestation, dynamic tools (never
		// registered) and the v1 approvals are never handled.
		s.protocolError(fmt.Sprintf("Codex sent a request Ensemble does not handle (%q).", method))
		return nil, &rpcError{Code: -32601, Message: "Ensemble does not handle " + method}
	}
}

// decide puts call to the host and answers "accept" or "decline". A refusal's
// reason is sent to the running turn first (turn/steer), so the model reads
// why, after the declined call's own output.
func (s *session) decide(ctx context.Context, call engines.ToolCall) (any, error) {
	p, err := s.host.Permit(ctx, call)
	if err != nil {
		if ctx.Err() != nil {
			return nil, context.Cause(ctx)
		}
		p = engines.Permission{Reason: "Ensemble could not decide this call: " + err.Error()}
	}
	if p.Allow {
		return map[string]any{"decision": "accept"}, nil
	}
	s.tellRefusal(ctx, call, p.Reason)
	return map[string]any{"decision": "decline"}, nil
}

// tellRefusal sends the model the reason a call was refused.
func (s *session) tellRefusal(ctx context.Context, call engines.ToolCall, reason string) {
	if reason == "" {
		reason = "Ensemble refused this call."
	}
	what := "the tool call"
	switch {
	case call.Command != "":
		what = "the command `" + call.Command + "`"
	case len(call.Paths) > 0:
		what = "the change to " + strings.Join(call.Paths, ", ")
	}
	sctx, cancel := context.WithTimeout(ctx, steerTimeout)
	defer cancel()
	text := "Ensemble declined " + what + ": " + reason
	if err := s.steer(sctx, text); err != nil {
		s.log.Warn("codex: the reason for a refusal could not be sent", "error", err)
	}
}

type commandApproval struct {
	ThreadID               string   `json:"threadId"`
	TurnID                 string   `json:"turnId"`
	ItemID                 string   `json:"itemId"`
	ApprovalID             string   `json:"approvalId"`
	Kind                   string   `json:"kind"`
	Command                *string  `json:"command"`
	Cwd                    *string  `json:"cwd"`
	Reason                 *string  `json:"reason"`
	NetworkApprovalContext *netHost `json:"networkApprovalContext"`
}

type netHost struct {
	Host     string `json:"host"`
	Protocol string `json:"protocol"`
}

func (s *session) approveCommand(ctx context.Context, raw json.RawMessage) (any, error) {
	var r commandApproval
	if err := json.Unmarshal(raw, &r); err != nil || r.ItemID == "" {
		s.protocolError("Codex asked about a command without naming it.")
		return map[string]any{"decision": "decline"}, nil
	}
	id := r.ItemID
	if r.ApprovalID != "" {
		id += "/" + r.ApprovalID
	}
	call := engines.ToolCall{ID: id, Tool: "commandExecution", Input: raw, Kind: "shell", Cwd: s.folder}
	if r.Cwd != nil && *r.Cwd != "" {
		call.Cwd = *r.Cwd
	}
	if r.Command != nil {
		call.Command = unwrapShell(*r.Command)
	}
	if n := r.NetworkApprovalContext; n != nil {
		call.Kind, call.URL = "fetch", n.Protocol+"://"+n.Host
	}
	// Under the untrusted policy Codex asks about a command with a reason only to run it outside
	// its sandbox: the model's justification for require_escalated, or "command failed; retry
	// without sandbox?". Approved, it runs unconfined, which only the person may allow.
	call.Unsandboxed = s.sandboxed && call.Kind == "shell" && r.Reason != nil && strings.TrimSpace(*r.Reason) != ""
	if call.Kind == "shell" && call.Command == "" {
		s.protocolError("Codex asked about a command without saying what it runs.")
		return map[string]any{"decision": "decline"}, nil
	}
	return s.decide(ctx, call)
}

func (s *session) approveFileChange(ctx context.Context, raw json.RawMessage) (any, error) {
	var r struct {
		ItemID    string  `json:"itemId"`
		Reason    *string `json:"reason"`
		GrantRoot *string `json:"grantRoot"`
	}
	if err := json.Unmarshal(raw, &r); err != nil || r.ItemID == "" {
		s.protocolError("Codex asked about a file change without naming it.")
		return map[string]any{"decision": "decline"}, nil
	}
	s.mu.Lock()
	ps, seen := s.changes[r.ItemID]
	s.mu.Unlock()
	call := engines.ToolCall{ID: r.ItemID, Tool: "fileChange", Input: raw, Kind: "edit", Cwd: s.folder, Paths: slices.Clone(ps)}
	if r.GrantRoot != nil && *r.GrantRoot != "" {
		call.Paths = append(call.Paths, *r.GrantRoot)
	}
	if !seen || len(call.Paths) == 0 {
		// A change whose files Ensemble did not see cannot be judged.
		s.tellRefusal(ctx, call, "Ensemble did not see which files this change touches.")
		return map[string]any{"decision": "decline"}, nil
	}
	return s.decide(ctx, call)
}

// approvePermissions answers a request for more room than the sandbox gives:
// all of it, for this turn, when the host allows, else none.
func (s *session) approvePermissions(ctx context.Context, raw json.RawMessage) (any, error) {
	var r struct {
		ItemID      string `json:"itemId"`
		Cwd         string `json:"cwd"`
		Permissions struct {
			FileSystem *struct {
				Read    []string `json:"read"`
				Write   []string `json:"write"`
				Entries []struct {
					Access string `json:"access"`
					Path   struct {
						Type    string `json:"type"`
						Path    string `json:"path"`
						Pattern string `json:"pattern"`
					} `json:"path"`
				} `json:"entries"`
			} `json:"fileSystem"`
			Network *struct {
				Enabled *bool `json:"enabled"`
			} `json:"network"`
		} `json:"permissions"`
	}
	none := map[string]any{"permissions": map[string]any{}, "scope": "turn"}
	if err := json.Unmarshal(raw, &r); err != nil {
		s.protocolError("Codex asked for permissions Ensemble cannot read.")
		return none, nil
	}
	var granted map[string]any
	_ = json.Unmarshal(raw, &struct {
		Permissions *map[string]any `json:"permissions"`
	}{&granted})
	call := engines.ToolCall{ID: r.ItemID, Tool: "permissions", Input: raw, Kind: "edit", Cwd: r.Cwd}
	if call.Cwd == "" {
		call.Cwd = s.folder
	}
	if fs := r.Permissions.FileSystem; fs != nil {
		call.Paths = append(call.Paths, fs.Write...)
		call.Paths = append(call.Paths, fs.Read...)
		for _, e := range fs.Entries {
			if e.Access == "deny" {
				continue
			}
			if p := e.Path.Path + e.Path.Pattern; p != "" {
				call.Paths = append(call.Paths, p)
			}
		}
	}
	if n := r.Permissions.Network; n != nil && n.Enabled != nil && *n.Enabled && len(call.Paths) == 0 {
		call.Kind = "fetch"
	}
	p, err := s.host.Permit(ctx, call)
	if err != nil {
		if ctx.Err() != nil {
			return nil, context.Cause(ctx)
		}
		return none, nil
	}
	if !p.Allow || granted == nil {
		s.tellRefusal(ctx, call, p.Reason)
		return none, nil
	}
	return map[string]any{"permissions": granted, "scope": "turn"}, nil
}

// userInput puts each of the model's questions (request_user_input) to the
// person.
func (s *session) userInput(ctx context.Context, raw json.RawMessage) (any, error) {
	var r struct {
		Questions []struct {
			ID       string `json:"id"`
			Header   string `json:"header"`
			Question string `json:"question"`
			IsOther  bool   `json:"isOther"`
			IsSecret bool   `json:"isSecret"`
			Options  []struct {
				Label       string `json:"label"`
				Description string `json:"description"`
			} `json:"options"`
		} `json:"questions"`
	}
	if err := json.Unmarshal(raw, &r); err != nil {
		s.protocolError("Codex asked the person something Ensemble cannot read.")
		return map[string]any{"answers": map[string]any{}}, nil
	}
	answers := map[string]any{}
	for _, q := range r.Questions {
		if q.IsSecret || secretField(q.ID, q.Header, q.Question) {
			// Secrets are typed in the agent's own app, never passed through.
			answers[q.ID] = map[string]any{"answers": []string{}}
			continue
		}
		eq := engines.Question{Text: q.Question, Recommended: -1, FreeText: q.IsOther || len(q.Options) == 0}
		for _, o := range q.Options {
			eq.Options = append(eq.Options, o.Label)
		}
		a, err := s.host.Ask(ctx, eq)
		if err != nil {
			if ctx.Err() != nil {
				return nil, context.Cause(ctx)
			}
			answers[q.ID] = map[string]any{"answers": []string{}}
			continue
		}
		answers[q.ID] = map[string]any{"answers": []string{a.Text}}
	}
	return map[string]any{"answers": answers}, nil
}

// secretWords mark a form field that asks for a secret.
var secretWords = regexp.MustCompile(`(?i)pass(word|phrase|code)?|secret|token|api[ _-]?key|\bkey\b|credential|\bpin\b|\botp\b`)

func secretField(texts ...string) bool {
	for _, t := range texts {
		if secretWords.MatchString(t) {
			return true
		}
	}
	return false
}

// elicitField is one field of an MCP elicitation form.
type elicitField struct {
	Type        string   `json:"type"`
	Title       string   `json:"title"`
	Description string   `json:"description"`
	Format      string   `json:"format"`
	Enum        []string `json:"enum"`
	EnumNames   []string `json:"enumNames"`
	OneOf       []struct {
		Const string `json:"const"`
		Title string `json:"title"`
	} `json:"oneOf"`
	Items *struct {
		Enum  []string `json:"enum"`
		AnyOf []struct {
			Const string `json:"const"`
			Title string `json:"title"`
		} `json:"anyOf"`
	} `json:"items"`
}

// elicit answers an MCP server's form: each field is a question to the
// person; a form without fields (approving one of the server's tools) is
// judged as that server's tool; a form asking for a secret, and a URL to
// open, are declined.
func (s *session) elicit(ctx context.Context, raw json.RawMessage) (any, error) {
	decline := map[string]any{"action": "decline"}
	var r struct {
		ServerName      string          `json:"serverName"`
		Mode            string          `json:"mode"`
		Message         string          `json:"message"`
		RequestedSchema json.RawMessage `json:"requestedSchema"`
	}
	if err := json.Unmarshal(raw, &r); err != nil {
		s.protocolError("Codex passed on an MCP server's question Ensemble cannot read.")
		return decline, nil
	}
	if r.Mode == "url" {
		return decline, nil
	}
	var form struct {
		Properties map[string]elicitField `json:"properties"`
		Required   []string               `json:"required"`
	}
	if len(r.RequestedSchema) > 0 && json.Unmarshal(r.RequestedSchema, &form) != nil {
		return decline, nil
	}
	if len(form.Properties) == 0 {
		call := engines.ToolCall{ID: "elicitation", Tool: "mcp__" + r.ServerName, Input: raw, Kind: "mcp", Cwd: s.folder}
		p, err := s.host.Permit(ctx, call)
		if err != nil {
			if ctx.Err() != nil {
				return nil, context.Cause(ctx)
			}
			return decline, nil
		}
		if !p.Allow {
			return decline, nil
		}
		return map[string]any{"action": "accept", "content": map[string]any{}}, nil
	}
	names := slices.Sorted(func(yield func(string) bool) {
		for k := range form.Properties {
			if !yield(k) {
				return
			}
		}
	})
	for _, name := range names {
		f := form.Properties[name]
		if f.Format == "password" || secretField(name, f.Title, f.Description) {
			return decline, nil
		}
	}
	content := map[string]any{}
	for _, name := range names {
		f := form.Properties[name]
		label := f.Title
		if label == "" {
			label = name
		}
		text := label
		if f.Description != "" {
			text += ": " + f.Description
		}
		if r.Message != "" {
			text = r.Message + "\n\n" + text
		}
		q := engines.Question{Text: text, Recommended: -1}
		var values []string
		switch {
		case f.Type == "boolean":
			q.Options, values = []string{"Yes", "No"}, []string{"true", "false"}
		case len(f.Enum) > 0:
			values = f.Enum
			q.Options = f.Enum
			if len(f.EnumNames) == len(f.Enum) {
				q.Options = f.EnumNames
			}
		case len(f.OneOf) > 0:
			for _, o := range f.OneOf {
				values, q.Options = append(values, o.Const), append(q.Options, cmp(o.Title, o.Const))
			}
		case f.Items != nil && len(f.Items.Enum) > 0:
			values, q.Options = f.Items.Enum, f.Items.Enum
		case f.Items != nil && len(f.Items.AnyOf) > 0:
			for _, o := range f.Items.AnyOf {
				values, q.Options = append(values, o.Const), append(q.Options, cmp(o.Title, o.Const))
			}
		default:
			q.FreeText = true
		}
		a, err := s.host.Ask(ctx, q)
		if err != nil {
			if ctx.Err() != nil {
				return nil, context.Cause(ctx)
			}
			return map[string]any{"action": "cancel"}, nil
		}
		v, ok := fieldValue(f, values, a)
		if !ok {
			if slices.Contains(form.Required, name) {
				return decline, nil
			}
			continue
		}
		content[name] = v
	}
	return map[string]any{"action": "accept", "content": content}, nil
}

func cmp(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// fieldValue is the person's answer in the field's own type.
func fieldValue(f elicitField, values []string, a engines.Answer) (any, bool) {
	text := a.Text
	if a.Option >= 0 && a.Option < len(values) {
		text = values[a.Option]
	}
	switch f.Type {
	case "boolean":
		b, err := strconv.ParseBool(text)
		return b, err == nil
	case "number":
		n, err := strconv.ParseFloat(strings.TrimSpace(text), 64)
		return n, err == nil
	case "integer":
		n, err := strconv.ParseInt(strings.TrimSpace(text), 10, 64)
		return n, err == nil
	case "array":
		return []string{text}, text != ""
	}
	return text, true
}

// unwrapShell is the script inside Codex's `/bin/bash -lc '…'` (or sh, zsh,
// -c), else the command as given.
func unwrapShell(command string) string {
	words, ok := splitWords(command)
	if !ok || len(words) != 3 {
		return command
	}
	shell := words[0]
	if i := strings.LastIndexAny(shell, `/\`); i >= 0 {
		shell = shell[i+1:]
	}
	switch shell {
	case "bash", "sh", "zsh", "dash":
	default:
		return command
	}
	switch words[1] {
	case "-lc", "-c", "-cl":
		return words[2]
	}
	return command
}

// splitWords splits a POSIX shell command line into words: single quotes,
// double quotes and backslashes as the shell reads them. Anything it cannot
// be sure of (an unclosed quote) is not split.
func splitWords(s string) ([]string, bool) {
	var words []string
	var cur strings.Builder
	inWord := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n':
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		case c == '\'':
			j := strings.IndexByte(s[i+1:], '\'')
			if j < 0 {
				return nil, false
			}
			cur.WriteString(s[i+1 : i+1+j])
			i += j + 1
			inWord = true
		case c == '"':
			i++
			for ; i < len(s) && s[i] != '"'; i++ {
				if s[i] == '\\' && i+1 < len(s) && strings.IndexByte("$`\"\\\n", s[i+1]) >= 0 {
					i++
				}
				cur.WriteByte(s[i])
			}
			if i >= len(s) {
				return nil, false
			}
			inWord = true
		case c == '\\':
			if i+1 >= len(s) {
				return nil, false
			}
			i++
			cur.WriteByte(s[i])
			inWord = true
		default:
			cur.WriteByte(c)
			inWord = true
		}
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words, true
}
