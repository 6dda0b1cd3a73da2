package enginetest

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"
)

// The steps every wire format is driven with.
var wireCases = []struct {
	name string
	step Step
	// want, in the order a client reassembles it
	thinking, text string
	calls          []call // ids are checked for presence and uniqueness only
	toolStop       bool
}{
	{name: "text", step: Say("Hello from the scripted model, in more than one delta."),
		text: "Hello from the scripted model, in more than one delta."},
	{name: "unicode text", step: Say("naïve café — 日本語のテキストを分割しても壊れない"),
		text: "naïve café — 日本語のテキストを分割しても壊れない"},
	{name: "thinking and text", step: Think("Let me think about this carefully first.", "Done."),
		thinking: "Let me think about this carefully first.", text: "Done."},
	{name: "tool call", step: ToolCall("Read", map[string]any{"file_path": "/tmp/a.txt", "limit": 20}),
		calls: []call{{name: "Read", args: `{"file_path":"/tmp/a.txt","limit":20}`}}, toolStop: true},
	{name: "text then two calls", step: Say("Looking.").Call("Read", map[string]any{"file_path": "a"}).Call("Grep", `{"pattern":"x"}`),
		text:  "Looking.",
		calls: []call{{name: "Read", args: `{"file_path":"a"}`}, {name: "Grep", args: `{"pattern":"x"}`}}, toolStop: true},
}

func checkTurn(t *testing.T, got turn, i int) {
	t.Helper()
	c := wireCases[i]
	if got.thinking != c.thinking {
		t.Errorf("thinking = %q, want %q", got.thinking, c.thinking)
	}
	if got.text != c.text {
		t.Errorf("text = %q, want %q", got.text, c.text)
	}
	if len(got.calls) != len(c.calls) {
		t.Fatalf("calls = %+v, want %+v", got.calls, c.calls)
	}
	ids := map[string]bool{}
	for j, gc := range got.calls {
		if gc.name != c.calls[j].name || compact(t, gc.args) != compact(t, c.calls[j].args) {
			t.Errorf("call %d = %s %s, want %s %s", j, gc.name, gc.args, c.calls[j].name, c.calls[j].args)
		}
		if gc.id == "" || ids[gc.id] {
			t.Errorf("call %d id %q empty or repeated", j, gc.id)
		}
		ids[gc.id] = true
	}
}

// wantOrder checks the event names against a pattern where "x*" means zero
// or more "x" and "x+" one or more.
func wantOrder(t *testing.T, got []string, pattern ...string) {
	t.Helper()
	i := 0
	for _, p := range pattern {
		name, rep := p, byte(0)
		if strings.HasSuffix(p, "*") || strings.HasSuffix(p, "+") {
			name, rep = p[:len(p)-1], p[len(p)-1]
		}
		n := 0
		for i < len(got) && got[i] == name && (rep != 0 || n == 0) {
			i++
			n++
		}
		if n == 0 && rep != '*' {
			t.Fatalf("events %v: want %q at %d", got, p, i)
		}
	}
	if i != len(got) {
		t.Fatalf("events %v: unexpected %q at %d", got, got[i], i)
	}
}

func reassembleAnthropic(t *testing.T, evs []sseEvent) turn {
	t.Helper()
	var tu turn
	type block struct {
		typ, id, name string
		buf           strings.Builder
	}
	blocks := map[int]*block{}
	var order []int
	for _, e := range evs {
		tu.events = append(tu.events, e.name)
		d := decode(t, e.data)
		if d["type"] != e.name {
			t.Fatalf("event %q carries type %v", e.name, d["type"])
		}
		switch e.name {
		case "content_block_start":
			idx := int(d["index"].(float64))
			cb := d["content_block"].(map[string]any)
			b := &block{typ: cb["type"].(string)}
			if b.typ == "tool_use" {
				b.id, b.name = cb["id"].(string), cb["name"].(string)
			}
			blocks[idx] = b
			order = append(order, idx)
		case "content_block_delta":
			b := blocks[int(d["index"].(float64))]
			delta := d["delta"].(map[string]any)
			switch delta["type"] {
			case "text_delta":
				b.buf.WriteString(delta["text"].(string))
			case "thinking_delta":
				b.buf.WriteString(delta["thinking"].(string))
			case "input_json_delta":
				b.buf.WriteString(delta["partial_json"].(string))
			case "signature_delta":
			default:
				t.Fatalf("unknown delta %v", delta)
			}
		case "message_delta":
			tu.stop = d["delta"].(map[string]any)["stop_reason"].(string)
			if _, ok := d["usage"].(map[string]any)["output_tokens"]; !ok {
				t.Errorf("message_delta without usage.output_tokens: %s", e.data)
			}
		}
	}
	for _, idx := range order {
		b := blocks[idx]
		switch b.typ {
		case "text":
			tu.text += b.buf.String()
		case "thinking":
			tu.thinking += b.buf.String()
		case "tool_use":
			tu.calls = append(tu.calls, call{id: b.id, name: b.name, args: b.buf.String()})
		}
	}
	return tu
}

func TestAnthropicStream(t *testing.T) {
	for i, c := range wireCases {
		t.Run(c.name, func(t *testing.T) {
			s := NewServer(t)
			s.Script(c.step)
			tu := reassembleAnthropic(t, postSSE(t, s.URL+"/v1/messages?beta=true", anthropicBody("hi", "Bash")))
			var pattern []string
			pattern = append(pattern, "message_start", "ping")
			blocks := len(c.calls)
			if c.thinking != "" {
				blocks++
			}
			if c.text != "" {
				blocks++
			}
			for range blocks {
				pattern = append(pattern, "content_block_start", "content_block_delta+", "content_block_stop")
			}
			pattern = append(pattern, "message_delta", "message_stop")
			wantOrder(t, tu.events, pattern...)
			checkTurn(t, tu, i)
			want := "end_turn"
			if c.toolStop {
				want = "tool_use"
			}
			if tu.stop != want {
				t.Errorf("stop_reason = %q, want %q", tu.stop, want)
			}
		})
	}
}

func reassembleResponses(t *testing.T, evs []sseEvent) (turn, map[string]any) {
	t.Helper()
	var tu turn
	var completed map[string]any
	args := map[string]*strings.Builder{}
	for n, e := range evs {
		tu.events = append(tu.events, e.name)
		d := decode(t, e.data)
		if d["type"] != e.name || int(d["sequence_number"].(float64)) != n {
			t.Fatalf("event %d %q: type %v sequence_number %v", n, e.name, d["type"], d["sequence_number"])
		}
		switch e.name {
		case "response.output_text.delta":
			tu.text += d["delta"].(string)
		case "response.reasoning_summary_text.delta":
			tu.thinking += d["delta"].(string)
		case "response.output_item.added":
			it := d["item"].(map[string]any)
			if it["type"] == "function_call" {
				id := it["id"].(string)
				args[id] = &strings.Builder{}
			}
		case "response.function_call_arguments.delta":
			args[d["item_id"].(string)].WriteString(d["delta"].(string))
		case "response.output_item.done":
			it := d["item"].(map[string]any)
			if it["type"] == "function_call" {
				id := it["id"].(string)
				streamed := args[id].String()
				if streamed != it["arguments"] {
					t.Errorf("arguments deltas %q, done %q", streamed, it["arguments"])
				}
				tu.calls = append(tu.calls, call{id: it["call_id"].(string), name: it["name"].(string), args: streamed})
			}
		case "response.completed":
			completed = d["response"].(map[string]any)
		}
	}
	return tu, completed
}

func TestResponsesStream(t *testing.T) {
	for i, c := range wireCases {
		t.Run(c.name, func(t *testing.T) {
			s := NewServer(t)
			s.Script(c.step)
			tu, completed := reassembleResponses(t, postSSE(t, s.URL+"/v1/responses", responsesBody("hi", "exec_command")))
			pattern := []string{"response.created", "response.in_progress"}
			if c.thinking != "" {
				pattern = append(pattern, "response.output_item.added", "response.reasoning_summary_part.added",
					"response.reasoning_summary_text.delta+", "response.reasoning_summary_text.done", "response.reasoning_summary_part.done", "response.output_item.done")
			}
			if c.text != "" {
				pattern = append(pattern, "response.output_item.added", "response.content_part.added", "response.output_text.delta+",
					"response.output_text.done", "response.content_part.done", "response.output_item.done")
			}
			for range c.calls {
				pattern = append(pattern, "response.output_item.added", "response.function_call_arguments.delta+",
					"response.function_call_arguments.done", "response.output_item.done")
			}
			pattern = append(pattern, "response.completed")
			wantOrder(t, tu.events, pattern...)
			checkTurn(t, tu, i)
			if completed["status"] != "completed" {
				t.Errorf("completed status = %v", completed["status"])
			}
			u, _ := completed["usage"].(map[string]any)
			if u["input_tokens"] == nil || u["output_tokens"] == nil || u["total_tokens"] == nil {
				t.Errorf("completed usage = %v", u)
			}
			if n := len(completed["output"].([]any)); n != len(c.calls)+btoi(c.text != "")+btoi(c.thinking != "") {
				t.Errorf("completed has %d output items", n)
			}
		})
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

func reassembleChat(t *testing.T, evs []sseEvent) (turn, map[string]any) {
	t.Helper()
	var tu turn
	var usage map[string]any
	type tc struct {
		id, name string
		args     strings.Builder
	}
	var calls []*tc
	if n := len(evs); n == 0 || evs[n-1].data != "[DONE]" {
		t.Fatalf("stream does not end with [DONE]: %v", evs)
	}
	for _, e := range evs[:len(evs)-1] {
		if e.name != "" {
			t.Fatalf("chat stream has a named event %q", e.name)
		}
		d := decode(t, e.data)
		if d["object"] != "chat.completion.chunk" {
			t.Fatalf("object = %v", d["object"])
		}
		choices := d["choices"].([]any)
		if len(choices) == 0 {
			tu.events = append(tu.events, "usage")
			usage = d["usage"].(map[string]any)
			continue
		}
		ch := choices[0].(map[string]any)
		delta := ch["delta"].(map[string]any)
		tag := "delta"
		switch {
		case delta["role"] != nil:
			tag = "role"
		case delta["reasoning_content"] != nil:
			tag = "reasoning"
			tu.thinking += delta["reasoning_content"].(string)
		case delta["content"] != nil:
			tag = "content"
			tu.text += delta["content"].(string)
		case delta["tool_calls"] != nil:
			tag = "tool_calls"
			for _, x := range delta["tool_calls"].([]any) {
				x := x.(map[string]any)
				idx := int(x["index"].(float64))
				if idx == len(calls) {
					calls = append(calls, &tc{id: x["id"].(string), name: x["function"].(map[string]any)["name"].(string)})
				}
				calls[idx].args.WriteString(x["function"].(map[string]any)["arguments"].(string))
			}
		}
		if fr, ok := ch["finish_reason"].(string); ok {
			tag = "finish"
			tu.stop = fr
		}
		tu.events = append(tu.events, tag)
	}
	for _, c := range calls {
		tu.calls = append(tu.calls, call{id: c.id, name: c.name, args: c.args.String()})
	}
	return tu, usage
}

func TestChatStream(t *testing.T) {
	for i, c := range wireCases {
		t.Run(c.name, func(t *testing.T) {
			s := NewServer(t)
			s.Script(c.step)
			tu, usage := reassembleChat(t, postSSE(t, s.URL+"/v1/chat/completions", chatBody("hi", "bash")))
			pattern := []string{"role", "reasoning*", "content*", "tool_calls*", "finish", "usage"}
			wantOrder(t, tu.events, pattern...)
			checkTurn(t, tu, i)
			want := "stop"
			if c.toolStop {
				want = "tool_calls"
			}
			if tu.stop != want {
				t.Errorf("finish_reason = %q, want %q", tu.stop, want)
			}
			if usage["total_tokens"] == nil {
				t.Errorf("usage chunk = %v", usage)
			}
		})
	}
}

func TestChatStreamWithoutUsage(t *testing.T) {
	s := NewServer(t)
	s.Script(Say("hi"))
	body := chatBody("hi")
	delete(body, "stream_options")
	tu, usage := reassembleChat(t, postSSE(t, s.URL+"/chat/completions", body))
	wantOrder(t, tu.events, "role", "content", "finish")
	if usage != nil {
		t.Errorf("usage chunk without include_usage: %v", usage)
	}
}

func reassembleGemini(t *testing.T, evs []sseEvent) turn {
	t.Helper()
	var tu turn
	for i, e := range evs {
		d := decode(t, e.data)
		cand := d["candidates"].([]any)[0].(map[string]any)
		for _, p := range cand["content"].(map[string]any)["parts"].([]any) {
			p := p.(map[string]any)
			switch {
			case p["functionCall"] != nil:
				fc := p["functionCall"].(map[string]any)
				b, _ := json.Marshal(fc["args"])
				tu.calls = append(tu.calls, call{id: fc["id"].(string), name: fc["name"].(string), args: string(b)})
			case p["thought"] == true:
				tu.thinking += p["text"].(string)
			default:
				tu.text += p["text"].(string)
			}
		}
		fr, _ := cand["finishReason"].(string)
		if last := i == len(evs)-1; last != (fr != "") || last != (d["usageMetadata"] != nil) {
			t.Errorf("event %d of %d: finishReason %q usageMetadata %v", i, len(evs), fr, d["usageMetadata"])
		}
		tu.stop = fr
	}
	return tu
}

func TestGeminiStream(t *testing.T) {
	for i, c := range wireCases {
		t.Run(c.name, func(t *testing.T) {
			s := NewServer(t)
			s.Script(c.step)
			evs := postSSE(t, s.URL+"/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse", geminiBody("hi", "run_shell_command"))
			tu := reassembleGemini(t, evs)
			checkTurn(t, tu, i)
			if tu.stop != "STOP" {
				t.Errorf("finishReason = %q", tu.stop)
			}
			if r := s.Requests()[0]; r.Model != "gemini-2.5-flash" || !r.Stream {
				t.Errorf("request model %q stream %v", r.Model, r.Stream)
			}
		})
	}
}

// TestNonStreaming checks the JSON bodies of each wire format for a turn
// with thinking, text and a tool call.
func TestNonStreaming(t *testing.T) {
	step := Think("hmm", "Checking.").Call("Read", map[string]any{"file_path": "a"})
	cases := []struct {
		name string
		path string
		body map[string]any
		// extract returns thinking, text, tool name, tool args.
		extract func(m map[string]any) (string, string, string, string)
	}{
		{"anthropic", "/v1/messages", anthropicBody("hi", "Read"), func(m map[string]any) (string, string, string, string) {
			c := m["content"].([]any)
			th, tx, tu := c[0].(map[string]any), c[1].(map[string]any), c[2].(map[string]any)
			b, _ := json.Marshal(tu["input"])
			if m["stop_reason"] != "tool_use" {
				t.Errorf("stop_reason %v", m["stop_reason"])
			}
			return th["thinking"].(string), tx["text"].(string), tu["name"].(string), string(b)
		}},
		{"responses", "/v1/responses", responsesBody("hi", "Read"), func(m map[string]any) (string, string, string, string) {
			out := m["output"].([]any)
			rs, msg, fc := out[0].(map[string]any), out[1].(map[string]any), out[2].(map[string]any)
			return rs["summary"].([]any)[0].(map[string]any)["text"].(string),
				msg["content"].([]any)[0].(map[string]any)["text"].(string), fc["name"].(string), fc["arguments"].(string)
		}},
		{"chat", "/v1/chat/completions", chatBody("hi", "Read"), func(m map[string]any) (string, string, string, string) {
			ch := m["choices"].([]any)[0].(map[string]any)
			msg := ch["message"].(map[string]any)
			fn := msg["tool_calls"].([]any)[0].(map[string]any)["function"].(map[string]any)
			if ch["finish_reason"] != "tool_calls" {
				t.Errorf("finish_reason %v", ch["finish_reason"])
			}
			return msg["reasoning_content"].(string), msg["content"].(string), fn["name"].(string), fn["arguments"].(string)
		}},
		{"gemini", "/v1beta/models/gemini-2.5-flash:generateContent", geminiBody("hi", "Read"), func(m map[string]any) (string, string, string, string) {
			parts := m["candidates"].([]any)[0].(map[string]any)["content"].(map[string]any)["parts"].([]any)
			fc := parts[2].(map[string]any)["functionCall"].(map[string]any)
			b, _ := json.Marshal(fc["args"])
			return parts[0].(map[string]any)["text"].(string), parts[1].(map[string]any)["text"].(string), fc["name"].(string), string(b)
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := NewServer(t)
			s.Script(step)
			c.body["stream"] = false
			status, m := postJSON(t, s.URL+c.path, c.body)
			if status != 200 {
				t.Fatalf("status %d: %v", status, m)
			}
			th, tx, name, args := c.extract(m)
			if th != "hmm" || tx != "Checking." || name != "Read" || compact(t, args) != `{"file_path":"a"}` {
				t.Errorf("got %q %q %q %q", th, tx, name, args)
			}
		})
	}
}

// TestShellResolvesPerCLI checks that Shell finds each CLI's shell tool
// and builds arguments from its schema.
func TestShellResolvesPerCLI(t *testing.T) {
	argv := map[string]any{"type": "object", "properties": map[string]any{
		"command": map[string]any{"type": "array", "items": map[string]any{"type": "string"}},
	}, "required": []string{"command"}}
	copilot := map[string]any{"type": "object", "properties": map[string]any{
		"command":     map[string]any{"type": "string"},
		"description": map[string]any{"type": "string"},
		"mode":        map[string]any{"type": "string", "enum": []string{"sync", "async"}},
	}, "required": []string{"command", "description", "mode"}}
	cases := []struct {
		name   string
		tools  []Tool
		want   string
		wantIn string
	}{
		{"claude", []Tool{{Name: "Read"}, {Name: "Bash", Schema: mustJSON(map[string]any{"properties": map[string]any{"command": map[string]any{"type": "string"}, "description": map[string]any{"type": "string"}}})}},
			"Bash", `{"command":"ls -la","description":"Run a scripted command"}`},
		{"codex", []Tool{{Name: "exec_command", Schema: mustJSON(map[string]any{"properties": map[string]any{"cmd": map[string]any{"type": "string"}, "workdir": map[string]any{"type": "string"}}, "required": []string{"cmd"}})}},
			"exec_command", `{"cmd":"ls -la"}`},
		{"argv", []Tool{{Name: "shell", Schema: mustJSON(argv)}}, "shell", `{"command":["bash","-lc","ls -la"]}`},
		{"copilot", []Tool{{Name: "bash", Schema: mustJSON(copilot)}}, "bash", `{"command":"ls -la","description":"Run a scripted command","mode":"sync"}`},
		{"gemini", []Tool{{Name: "run_shell_command", Schema: mustJSON(map[string]any{"properties": map[string]any{"command": map[string]any{"type": "string"}}})}},
			"run_shell_command", `{"command":"ls -la"}`},
		{"none", nil, "Bash", `{"command":"ls -la"}`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			name, args := shellCall(&Request{Tools: c.tools}, "ls -la")
			if name != c.want || compact(t, args) != compact(t, c.wantIn) {
				t.Errorf("shellCall = %s %s, want %s %s", name, args, c.want, c.wantIn)
			}
		})
	}
}

func TestChunksKeepRunes(t *testing.T) {
	for _, s := range []string{"", "a", strings.Repeat("x", 50), "日本語のテキスト", "é" + strings.Repeat("ü", 30)} {
		parts := chunks(s, 5)
		if strings.Join(parts, "") != s {
			t.Errorf("chunks(%q) = %q", s, parts)
		}
		for _, p := range parts {
			if !utf8.ValidString(p) {
				t.Errorf("chunk %q splits a rune", p)
			}
		}
	}
	if !reflect.DeepEqual(chunks("abcdef", 4), []string{"abcd", "ef"}) {
		t.Errorf("chunks(abcdef, 4) = %q", chunks("abcdef", 4))
	}
}
