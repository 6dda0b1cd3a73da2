package acp

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/ensemblework/ensemble/engines"
)

// secretField matches a form field that asks for a credential; such a form is declined: a
// password, key or token never passes through Needs me.
var secretField = regexp.MustCompile(`(?i)(password|passwd|passphrase|secret|token|api[_ -]?key|apikey|credential|private[_ -]?key|^key$)`)

// UnstableCreateElicitation puts a form question (OpenCode's question tool) to the person, one
// question per field. A URL elicitation, or a form that asks for a secret, is declined.
func (c *client) UnstableCreateElicitation(ctx context.Context, req acpsdk.UnstableCreateElicitationRequest) (acpsdk.UnstableCreateElicitationResponse, error) {
	decline := acpsdk.NewUnstableCreateElicitationResponseDecline()
	if req.Form == nil {
		c.log.Info("acp: declined a URL elicitation", "agent", c.p.Name)
		return decline, nil
	}
	c.mu.Lock()
	loading := c.loading
	c.mu.Unlock()
	if loading {
		return decline, nil
	}
	form := req.Form
	props := form.RequestedSchema.Properties
	keys := slices.Sorted(func(yield func(string) bool) {
		for k := range props {
			if !yield(k) {
				return
			}
		}
	})
	// Required fields first, in the agent's order.
	var ordered []string
	for _, k := range form.RequestedSchema.Required {
		if _, ok := props[k]; ok && !slices.Contains(ordered, k) {
			ordered = append(ordered, k)
		}
	}
	for _, k := range keys {
		if !slices.Contains(ordered, k) {
			ordered = append(ordered, k)
		}
	}
	type field struct {
		key    string
		schema map[string]any
	}
	var fields []field
	for _, k := range ordered {
		m, _ := props[k].(map[string]any)
		title, _ := m["title"].(string)
		format, _ := m["format"].(string)
		if format == "password" || secretField.MatchString(k) || secretField.MatchString(title) {
			c.log.Info("acp: declined a form asking for a secret", "agent", c.p.Name, "field", k)
			return decline, nil
		}
		fields = append(fields, field{k, m})
	}
	ctx, stop := context.WithCancel(ctx)
	defer stop()
	defer context.AfterFunc(c.runCtx, stop)()
	content := map[string]any{}
	for _, f := range fields {
		q, values := question(form.Message, f.key, f.schema, len(fields) > 1)
		ans, err := c.host.Ask(ctx, q)
		if err != nil {
			return acpsdk.NewUnstableCreateElicitationResponseCancel(), nil
		}
		if ans.Option >= 0 && ans.Option < len(values) {
			content[f.key] = values[ans.Option]
		} else {
			content[f.key] = typed(f.schema, ans.Text)
		}
	}
	resp := acpsdk.NewUnstableCreateElicitationResponseAccept()
	resp.Accept.Content = content
	return resp, nil
}

// question is one form field as a question, with the value each option stands for.
func question(message, key string, schema map[string]any, many bool) (engines.Question, []any) {
	title, _ := schema["title"].(string)
	desc, _ := schema["description"].(string)
	text := strings.TrimSpace(message)
	if many || text == "" {
		label := title
		if label == "" {
			label = key
		}
		if desc != "" {
			label += ": " + desc
		}
		if text != "" {
			text += "\n\n"
		}
		text += label
	}
	q := engines.Question{Text: text, Recommended: -1}
	var values []any
	switch {
	case schema["enum"] != nil:
		enum, _ := schema["enum"].([]any)
		names, _ := schema["enumNames"].([]any)
		for i, v := range enum {
			label := fmt.Sprint(v)
			if i < len(names) {
				label = fmt.Sprint(names[i])
			}
			q.Options = append(q.Options, label)
			values = append(values, v)
		}
	case schema["oneOf"] != nil || schema["anyOf"] != nil:
		list, _ := schema["oneOf"].([]any)
		if list == nil {
			list, _ = schema["anyOf"].([]any)
		}
		for _, o := range list {
			m, _ := o.(map[string]any)
			v, ok := m["const"]
			if !ok {
				continue
			}
			label, _ := m["title"].(string)
			if label == "" {
				label = fmt.Sprint(v)
			}
			q.Options = append(q.Options, label)
			values = append(values, v)
		}
	case schema["type"] == "boolean":
		q.Options = []string{"Yes", "No"}
		values = []any{true, false}
	}
	if def, ok := schema["default"]; ok {
		for i, v := range values {
			if fmt.Sprint(v) == fmt.Sprint(def) {
				q.Recommended = i
			}
		}
	}
	q.FreeText = len(q.Options) == 0 || schema["type"] == "string" && schema["enum"] == nil && schema["oneOf"] == nil && schema["anyOf"] == nil
	return q, values
}

// typed is a free-text answer as the field's type.
func typed(schema map[string]any, s string) any {
	switch schema["type"] {
	case "integer":
		if n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64); err == nil {
			return n
		}
	case "number":
		if f, err := strconv.ParseFloat(strings.TrimSpace(s), 64); err == nil {
			return f
		}
	case "boolean":
		if b, err := strconv.ParseBool(strings.TrimSpace(s)); err == nil {
			return b
		}
	}
	return s
}
