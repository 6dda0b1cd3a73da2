package enginetest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// reply is a step resolved against one request: ids made, shell calls
// turned into the request's own shell tool.
type reply struct {
	thinking string
	text     string
	calls    []resolvedCall
	// open leaves a stream without its closing events (a step that hangs
	// or breaks off after its content).
	open  bool
	usage usage
}

type resolvedCall struct {
	id     string
	name   string
	args   string // JSON object text; for custom calls, the raw text
	custom bool
}

type usage struct{ input, output int }

func (r reply) empty() bool { return r.thinking == "" && r.text == "" && len(r.calls) == 0 }

func (r reply) size() int {
	n := len(r.thinking) + len(r.text)
	for _, c := range r.calls {
		n += len(c.name) + len(c.args)
	}
	return n
}

func (r reply) summary() string {
	var parts []string
	if r.thinking != "" {
		parts = append(parts, fmt.Sprintf("thinking %q", clip(r.thinking, 40)))
	}
	if r.text != "" {
		parts = append(parts, fmt.Sprintf("text %q", clip(r.text, 60)))
	}
	for _, c := range r.calls {
		parts = append(parts, fmt.Sprintf("call %s %s", c.name, clip(c.args, 80)))
	}
	if len(parts) == 0 {
		return "(nothing)"
	}
	return strings.Join(parts, ", ")
}

// resolve turns a step into the reply for r.
func (s *Server) resolve(r *Request, st *Step) reply {
	rep := reply{thinking: st.Thinking, text: st.Text, open: st.Hang || st.BreakOff != ""}
	for _, c := range st.Calls {
		rc := resolvedCall{id: c.ID, name: c.Name, custom: c.Custom}
		switch {
		case c.Shell != "" && c.Name == "":
			rc.name, rc.args = shellCall(r, c.Shell)
		case c.Custom:
			rc.args = c.Text
		case len(c.Input) > 0:
			rc.args = string(c.Input)
		default:
			rc.args = "{}"
		}
		if c.Shell != "" && c.Name != "" {
			rc.args = shellArgs(r.Tool(c.Name), c.Shell)
		}
		if rc.id == "" {
			prefix := "call"
			if r.API == Anthropic {
				prefix = "toolu"
			}
			rc.id = s.nextID(prefix)
		}
		rep.calls = append(rep.calls, rc)
	}
	return rep
}

// shellTools are the shell tools' names in the CLIs, in the order tried.
var shellTools = []string{
	"Bash", "bash", "exec_command", "shell", "run_shell_command", "local_shell",
	"run_terminal_cmd", "execute", "terminal", "powershell",
}

// shellCall picks the request's shell tool and builds its arguments.
func shellCall(r *Request, cmd string) (name, args string) {
	for _, n := range shellTools {
		if t := r.Tool(n); t != nil {
			return t.Name, shellArgs(t, cmd)
		}
	}
	return "Bash", shellArgs(nil, cmd)
}

// shellArgs builds a shell tool's input from its schema: the command goes
// into "command" or "cmd" (an argv array when the schema says so), other
// required fields are filled with placeholders.
func shellArgs(t *Tool, cmd string) string {
	var sch schema
	if t != nil {
		_ = json.Unmarshal(t.Schema, &sch)
	}
	obj := map[string]any{}
	key := "command"
	if _, ok := sch.Properties["command"]; !ok {
		if _, ok := sch.Properties["cmd"]; ok {
			key = "cmd"
		}
	}
	for _, req := range sch.Required {
		if p, ok := sch.Properties[req]; ok {
			obj[req] = p.fill(req, 0)
		}
	}
	if _, ok := sch.Properties["description"]; ok {
		obj["description"] = "Run a scripted command"
	}
	if p, ok := sch.Properties[key]; ok && p.typeIs("array") {
		obj[key] = []string{"bash", "-lc", cmd}
	} else {
		obj[key] = cmd
	}
	b, _ := json.Marshal(obj)
	return string(b)
}

// schema is the part of a JSON Schema the filler reads.
type schema struct {
	Type       json.RawMessage    `json:"type"`
	Properties map[string]*schema `json:"properties"`
	Required   []string           `json:"required"`
	Items      *schema            `json:"items"`
	Enum       []any              `json:"enum"`
	AnyOf      []*schema          `json:"anyOf"`
	OneOf      []*schema          `json:"oneOf"`
}

func (sc *schema) typeIs(want string) bool {
	if sc == nil || len(sc.Type) == 0 {
		return false
	}
	var one string
	if json.Unmarshal(sc.Type, &one) == nil {
		return strings.EqualFold(one, want)
	}
	var many []string
	_ = json.Unmarshal(sc.Type, &many)
	for _, t := range many {
		if strings.EqualFold(t, want) {
			return true
		}
	}
	return false
}

// fill makes a minimal value that satisfies sc: the first enum value,
// every property of an object (Gemini's schemas mark few required), 1 for
// numbers, "scripted" for strings.
func (sc *schema) fill(name string, depth int) any {
	if sc == nil || depth > 8 {
		return nil
	}
	if len(sc.Enum) > 0 {
		return sc.Enum[0]
	}
	if len(sc.AnyOf) > 0 {
		return sc.AnyOf[0].fill(name, depth+1)
	}
	if len(sc.OneOf) > 0 {
		return sc.OneOf[0].fill(name, depth+1)
	}
	switch {
	case sc.typeIs("object") || sc.Properties != nil:
		obj := map[string]any{}
		for k, p := range sc.Properties {
			obj[k] = p.fill(k, depth+1)
		}
		return obj
	case sc.typeIs("array"):
		return []any{}
	case sc.typeIs("integer"), sc.typeIs("number"):
		return 1
	case sc.typeIs("boolean"):
		return false
	case sc.typeIs("null"):
		return nil
	}
	return "scripted " + name
}

// sideReply is the built-in answer to a side request.
func sideReply(r *Request) reply {
	if len(r.JSONSchema) > 0 {
		var sc schema
		_ = json.Unmarshal(r.JSONSchema, &sc)
		v := sc.fill("value", 0)
		if v == nil {
			v = map[string]any{}
		}
		b, _ := json.Marshal(v)
		return reply{text: string(b)}
	}
	switch r.Side {
	case SideTitle:
		return reply{text: "Scripted session"}
	case SideTopic:
		return reply{text: `{"isNewTopic": false, "title": null}`}
	}
	return reply{text: "ok"}
}

// chunks splits s into pieces of about n bytes on rune boundaries, so
// clients reassemble deltas the way they do from a real model.
func chunks(s string, n int) []string {
	if s == "" {
		return nil
	}
	var out []string
	for len(s) > n {
		i := n
		for i > 0 && !utf8.RuneStart(s[i]) {
			i--
		}
		if i == 0 {
			i = n
		}
		out = append(out, s[:i])
		s = s[i:]
	}
	return append(out, s)
}

const chunkSize = 24

// output writes one reply, as SSE events when streaming.
type output struct {
	w      http.ResponseWriter
	f      http.Flusher
	stream bool
	err    error
	// cut sends only the first half of a whole (non-streamed) body: a reply
	// that breaks off.
	cut bool
}

func newOutput(w http.ResponseWriter, stream bool) *output {
	o := &output{w: w, stream: stream}
	o.f, _ = w.(http.Flusher)
	if stream {
		h := w.Header()
		h.Set("Content-Type", "text/event-stream")
		h.Set("Cache-Control", "no-cache")
		h.Set("Connection", "keep-alive")
		w.WriteHeader(http.StatusOK)
		o.flush()
	}
	return o
}

// event writes one SSE event; name may be empty (data-only events).
func (o *output) event(name string, data any) {
	if o.err != nil {
		return
	}
	var b []byte
	switch d := data.(type) {
	case string:
		b = []byte(d)
	default:
		var err error
		if b, err = json.Marshal(d); err != nil {
			o.err = err
			return
		}
	}
	var buf []byte
	if name != "" {
		buf = append(buf, "event: "...)
		buf = append(buf, name...)
		buf = append(buf, '\n')
	}
	buf = append(buf, "data: "...)
	buf = append(buf, b...)
	buf = append(buf, "\n\n"...)
	_, o.err = o.w.Write(buf)
	o.flush()
}

func (o *output) flush() {
	if o.f != nil {
		o.f.Flush()
	}
}

// json writes a whole non-streamed body, or the first half of it when cut.
func (o *output) json(v any) {
	if !o.cut {
		writeJSON(o.w, http.StatusOK, v)
		return
	}
	b, _ := json.Marshal(v)
	o.w.Header().Set("Content-Type", "application/json")
	o.w.WriteHeader(http.StatusOK)
	_, o.err = o.w.Write(b[:len(b)/2])
	o.flush()
}

// writeAPIError answers an HTTP error in the wire format's own error shape.
func writeAPIError(w http.ResponseWriter, api API, status int, typ, msg string, retryAfter time.Duration) {
	if msg == "" {
		msg = http.StatusText(status)
		if msg == "" {
			msg = "scripted error"
		}
	}
	if retryAfter > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(int((retryAfter+time.Second-1)/time.Second)))
		w.Header().Set("retry-after-ms", strconv.FormatInt(retryAfter.Milliseconds(), 10))
	}
	switch api {
	case Anthropic:
		if typ == "" {
			typ = anthropicErrorType(status)
		}
		writeJSON(w, status, map[string]any{"type": "error", "error": map[string]any{"type": typ, "message": msg}})
	case Gemini:
		if status == 529 {
			status = http.StatusServiceUnavailable
		}
		writeJSON(w, status, map[string]any{"error": map[string]any{"code": status, "message": msg, "status": geminiStatus(status)}})
	default:
		if status == 529 {
			status = http.StatusServiceUnavailable
		}
		if typ == "" {
			typ = openAIErrorType(status)
		}
		writeJSON(w, status, map[string]any{"error": map[string]any{"message": msg, "type": typ, "param": nil, "code": typ}})
	}
}

func anthropicErrorType(status int) string {
	switch status {
	case 400:
		return "invalid_request_error"
	case 401:
		return "authentication_error"
	case 403:
		return "permission_error"
	case 404:
		return "not_found_error"
	case 413:
		return "request_too_large"
	case 429:
		return "rate_limit_error"
	case 529:
		return "overloaded_error"
	}
	return "api_error"
}

func openAIErrorType(status int) string {
	switch status {
	case 400:
		return "invalid_request_error"
	case 401:
		return "invalid_api_key"
	case 429:
		return "rate_limit_exceeded"
	}
	return "server_error"
}

func geminiStatus(status int) string {
	switch status {
	case 400:
		return "INVALID_ARGUMENT"
	case 401:
		return "UNAUTHENTICATED"
	case 403:
		return "PERMISSION_DENIED"
	case 404:
		return "NOT_FOUND"
	case 429:
		return "RESOURCE_EXHAUSTED"
	case 503:
		return "UNAVAILABLE"
	}
	return "INTERNAL"
}
