package enginetest

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"
)

type sseEvent struct {
	name string
	data string
}

// readSSE parses a whole SSE body into events.
func readSSE(t testing.TB, r io.Reader) []sseEvent {
	t.Helper()
	var out []sseEvent
	var cur sseEvent
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			if cur.data != "" || cur.name != "" {
				out = append(out, cur)
			}
			cur = sseEvent{}
		case strings.HasPrefix(line, "event: "):
			cur.name = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			cur.data += strings.TrimPrefix(line, "data: ")
		default:
			t.Fatalf("unexpected SSE line %q", line)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatalf("read SSE: %v", err)
	}
	if cur.data != "" {
		t.Fatalf("SSE body ends inside an event: %+v", cur)
	}
	return out
}

// post sends body as JSON and returns the response; the caller closes it.
func post(t testing.TB, ctx context.Context, url string, body any) *http.Response {
	t.Helper()
	b, err := json.Marshal(body)
	if err != nil {
		t.Fatal(err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("x-api-key", "dummy-secret")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("POST %s: %v", url, err)
	}
	return resp
}

func postSSE(t testing.TB, url string, body any) []sseEvent {
	t.Helper()
	resp := post(t, context.Background(), url, body)
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("POST %s: status %d: %s", url, resp.StatusCode, b)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("Content-Type = %q, want text/event-stream", ct)
	}
	return readSSE(t, resp.Body)
}

func postJSON(t testing.TB, url string, body any) (int, map[string]any) {
	t.Helper()
	resp := post(t, context.Background(), url, body)
	defer resp.Body.Close()
	var m map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&m); err != nil {
		t.Fatalf("decode %s response: %v", url, err)
	}
	return resp.StatusCode, m
}

func decode(t testing.TB, s string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		t.Fatalf("decode %q: %v", s, err)
	}
	return m
}

// call is a reassembled tool call.
type call struct{ id, name, args string }

// turn is a reassembled model reply.
type turn struct {
	events   []string // event names (or a short tag for data-only events)
	thinking string
	text     string
	calls    []call
	stop     string
}

// compact normalises JSON text for comparison.
func compact(t testing.TB, s string) string {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatalf("not JSON: %q: %v", s, err)
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// Request bodies as the CLIs send them (trimmed).

func anthropicBody(user string, tools ...string) map[string]any {
	var ts []any
	for _, n := range tools {
		ts = append(ts, map[string]any{"name": n, "description": n, "input_schema": map[string]any{
			"type": "object", "properties": map[string]any{"command": map[string]any{"type": "string"}, "description": map[string]any{"type": "string"}},
			"required": []string{"command"},
		}})
	}
	return map[string]any{
		"model": "claude-opus-4-8", "max_tokens": 1024, "stream": true,
		"system":   []any{map[string]any{"type": "text", "text": "You are a Claude agent."}},
		"messages": []any{map[string]any{"role": "user", "content": []any{map[string]any{"type": "text", "text": user}}}},
		"tools":    ts,
	}
}

func responsesBody(user string, tools ...string) map[string]any {
	var ts []any
	for _, n := range tools {
		ts = append(ts, map[string]any{"type": "function", "name": n, "parameters": map[string]any{
			"type": "object", "properties": map[string]any{"cmd": map[string]any{"type": "string"}, "workdir": map[string]any{"type": "string"}},
			"required": []string{"cmd"},
		}})
	}
	return map[string]any{
		"model": "gpt-5.5", "stream": true, "instructions": "You are Codex.",
		"input": []any{map[string]any{"type": "message", "role": "user", "content": []any{map[string]any{"type": "input_text", "text": user}}}},
		"tools": ts, "tool_choice": "auto", "parallel_tool_calls": true,
	}
}

func chatBody(user string, tools ...string) map[string]any {
	var ts []any
	for _, n := range tools {
		ts = append(ts, map[string]any{"type": "function", "function": map[string]any{"name": n, "parameters": map[string]any{
			"type": "object", "properties": map[string]any{"command": map[string]any{"type": "string"}, "description": map[string]any{"type": "string"}},
			"required": []string{"command", "description"},
		}}})
	}
	return map[string]any{
		"model": "fake-model", "stream": true, "stream_options": map[string]any{"include_usage": true},
		"messages": []any{
			map[string]any{"role": "system", "content": "You are opencode."},
			map[string]any{"role": "user", "content": user},
		},
		"tools": ts,
	}
}

func geminiBody(user string, tools ...string) map[string]any {
	var fds []any
	for _, n := range tools {
		fds = append(fds, map[string]any{"name": n, "parametersJsonSchema": map[string]any{
			"type": "object", "properties": map[string]any{"command": map[string]any{"type": "string"}}, "required": []string{"command"},
		}})
	}
	b := map[string]any{
		"contents":          []any{map[string]any{"role": "user", "parts": []any{map[string]any{"text": user}}}},
		"systemInstruction": map[string]any{"parts": []any{map[string]any{"text": "You are Gemini CLI."}}},
	}
	if fds != nil {
		b["tools"] = []any{map[string]any{"functionDeclarations": fds}}
	}
	return b
}

func sprintf(format string, args ...any) string { return fmt.Sprintf(format, args...) }

func mustRequest(t testing.TB, ctx context.Context, url string, body any) *http.Request {
	t.Helper()
	b, err := json.Marshal(body)
	if err != nil {
		t.Fatal(err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	return req
}

func ctxTimeout(t testing.TB, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

func writeFile(t testing.TB, path, s string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

// fire posts body from any goroutine and returns the response body ("" on
// error); it never touches a testing.T.
func fire(url string, body any) string {
	b, _ := json.Marshal(body)
	resp, err := http.Post(url, "application/json", bytes.NewReader(b))
	if err != nil {
		return ""
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	return string(out)
}
