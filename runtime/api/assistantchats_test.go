package api

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/ensemblework/ensemble/engines/enginetest"
)

// call sends one request with the launch token and returns the status and the body.
func call(t *testing.T, srv *httptest.Server, tok LaunchToken, method, path, body string) (int, string) {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, _ := http.NewRequest(method, srv.URL+path, rd)
	req.Header.Set("Authorization", "Bearer "+tok.Reveal())
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func TestAssistantConversationRoutes(t *testing.T) {
	srv, tok, model, _ := assistantFixture(t, time.Minute)
	model.Script(enginetest.Say("Hello there."))
	_, frames := postTurn(t, srv, tok, `{"text":"say hello\nplease","model":"m"}`)
	id, _ := frames[0].Data["conversationId"].(string)
	if id == "" || frames[len(frames)-1].Event != "done" {
		t.Fatalf("frames %+v", frames)
	}

	code, body := call(t, srv, tok, "GET", "/api/assistant/conversations", "")
	var list struct {
		Conversations []map[string]any `json:"conversations"`
	}
	json.Unmarshal([]byte(body), &list)
	if code != 200 || len(list.Conversations) != 1 {
		t.Fatalf("list: %d %s", code, body)
	}
	if c := list.Conversations[0]; c["id"] != id || c["title"] != "say hello please" || c["messages"] != 2.0 || c["busy"] != false || c["updatedAt"] == "" {
		t.Fatalf("list item %v", c)
	}

	code, body = call(t, srv, tok, "GET", "/api/assistant/conversations/"+id, "")
	var conv struct {
		ID       string           `json:"id"`
		Busy     *bool            `json:"busy"`
		Messages []map[string]any `json:"messages"`
	}
	json.Unmarshal([]byte(body), &conv)
	if code != 200 || conv.ID != id || conv.Busy == nil || len(conv.Messages) != 2 {
		t.Fatalf("get: %d %s", code, body)
	}
	if m := conv.Messages[1]; m["role"] != "assistant" || m["text"] != "Hello there." || m["at"] == nil || m["id"] == nil {
		t.Fatalf("reply %v", m)
	}
	for _, absent := range []string{"error", "stopped", "tools"} {
		if _, ok := conv.Messages[1][absent]; ok {
			t.Errorf("reply has %q: %v", absent, conv.Messages[1])
		}
	}

	for _, tc := range []struct {
		method, path string
		code         int
		says         string
	}{
		{"GET", "/api/assistant/conversations/cnv_nope", 404, "There is no such conversation"},
		{"DELETE", "/api/assistant/conversations/cnv_nope", 404, "There is no such conversation"},
		{"POST", "/api/assistant/conversations/cnv_nope/stop", 404, "There is no such conversation"},
		{"POST", "/api/assistant/conversations/" + id + "/stop", 409, "Nothing is running in this conversation."},
		{"GET", "/api/assistant/conversations?limit=0", 400, "limit must be"},
		{"DELETE", "/api/assistant/conversations/" + id, 204, ""},
		{"GET", "/api/assistant/conversations/" + id, 404, "There is no such conversation"},
		{"DELETE", "/api/assistant/conversations/" + id, 404, "There is no such conversation"},
	} {
		code, body := call(t, srv, tok, tc.method, tc.path, "")
		if code != tc.code || !strings.Contains(body, tc.says) {
			t.Errorf("%s %s: %d %s, want %d %q", tc.method, tc.path, code, body, tc.code, tc.says)
		}
	}
	// A turn in a conversation that is gone is refused before it streams.
	resp, _ := postTurn(t, srv, tok, `{"conversationId":"`+id+`","text":"again","model":"m"}`)
	if resp.StatusCode != 404 {
		t.Fatalf("turn in a deleted conversation: %d", resp.StatusCode)
	}
	// Without the token, nothing.
	req, _ := http.NewRequest("GET", srv.URL+"/api/assistant/conversations", nil)
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != 401 {
		t.Fatalf("without a token: %v %v", resp, err)
	}
}

func TestAssistantStopRoute(t *testing.T) {
	srv, tok, model, _ := assistantFixture(t, time.Minute)
	model.Script(enginetest.Say("Partly ans").ThenHang())
	req, _ := http.NewRequest("POST", srv.URL+"/api/assistant/turn", strings.NewReader(`{"text":"go on and on","model":"m"}`))
	req.Header.Set("Authorization", "Bearer "+tok.Reveal())
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	frames := make(chan sseFrame, 32)
	go func() {
		defer close(frames)
		var ev string
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			line := sc.Text()
			switch {
			case strings.HasPrefix(line, "event: "):
				ev = strings.TrimPrefix(line, "event: ")
			case strings.HasPrefix(line, "data: "):
				var d map[string]any
				json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &d)
				frames <- sseFrame{ev, d}
			}
		}
	}()
	next := func() sseFrame {
		select {
		case f := <-frames:
			return f
		case <-time.After(10 * time.Second):
			t.Fatal("no frame")
		}
		return sseFrame{}
	}
	id := next().Data["conversationId"].(string)
	if f := next(); f.Event != "refs" { // the records the turn knows come before any text
		t.Fatalf("frame %+v", f)
	}
	if f := next(); f.Event != "text" || f.Data["text"] != "Partly ans" {
		t.Fatalf("frame %+v", f)
	}
	// Busy: a second turn in it is refused, and the list says so.
	if resp, _ := postTurn(t, srv, tok, `{"conversationId":"`+id+`","text":"and?","model":"m"}`); resp.StatusCode != 409 {
		t.Fatalf("second turn: %d", resp.StatusCode)
	}
	if _, body := call(t, srv, tok, "GET", "/api/assistant/conversations", ""); !strings.Contains(body, `"busy":true`) {
		t.Fatalf("list while answering: %s", body)
	}
	if code, body := call(t, srv, tok, "POST", "/api/assistant/conversations/"+id+"/stop", ""); code != 204 {
		t.Fatalf("stop: %d %s", code, body)
	}
	f := next()
	if f.Event != "error" || f.Data["error"] != "Stopped." || f.Data["kind"] != "stopped" {
		t.Fatalf("last frame %+v", f)
	}
	_, body := call(t, srv, tok, "GET", "/api/assistant/conversations/"+id, "")
	if !strings.Contains(body, `"text":"Partly ans","stopped":true`) || !strings.Contains(body, `"busy":false`) {
		t.Fatalf("after stop: %s", body)
	}
}

func TestAssistantSettingsRoutes(t *testing.T) {
	srv, tok, _, _ := assistantFixture(t, time.Minute)
	const def = `{"provider":"anthropic","model":"","baseUrl":"","effort":"","writePolicy":"immediate","allowedWriteAreas":["tasks","pages","projects","people","repos","agents","workflows"]}`
	if code, body := call(t, srv, tok, "GET", "/api/assistant/settings", ""); code != 200 || strings.TrimSpace(body) != def {
		t.Fatalf("defaults: %d %s", code, body)
	}
	const set = `{"provider":"openai","model":"gpt-5","baseUrl":"https://models.example/v1","effort":"high","writePolicy":"preview","allowedWriteAreas":["tasks","pages","projects","people","repos","agents","workflows"]}`
	if code, body := call(t, srv, tok, "PUT", "/api/assistant/settings", set); code != 200 || strings.TrimSpace(body) != set {
		t.Fatalf("put: %d %s", code, body)
	}
	for _, tc := range []struct {
		name, body, says string
	}{
		{"bad JSON", `{"model":`, "not valid JSON"},
		{"unknown field", `{"modle":"x"}`, `Unknown field "modle"`},
		{"wrong type", `{"model":3}`, `Field "model" must be text`},
		{"bad policy", `{"model":"other","writePolicy":"whenever"}`, `Write policy "whenever" is not one of immediate, preview or needs-me.`},
		{"bad provider", `{"provider":"gemini"}`, `Provider "gemini" is not one of anthropic, openai, ollama, claude-code, codex, opencode or gemini-cli.`},
		{"bad base URL", `{"baseUrl":"ftp://x"}`, "is not an http(s) address"},
	} {
		code, body := call(t, srv, tok, "PUT", "/api/assistant/settings", tc.body)
		var e errorBody
		json.Unmarshal([]byte(body), &e)
		if code != 400 || !strings.Contains(e.Error, tc.says) {
			t.Errorf("%s: %d %s, want 400 %q", tc.name, code, body, tc.says)
		}
	}
	if _, body := call(t, srv, tok, "GET", "/api/assistant/settings", ""); strings.TrimSpace(body) != set {
		t.Fatalf("a refused change changed something: %s", body)
	}
	// A field left out keeps its value.
	if _, body := call(t, srv, tok, "PUT", "/api/assistant/settings", `{"writePolicy":"needs-me"}`); !strings.Contains(body, `"model":"gpt-5"`) || !strings.Contains(body, `"writePolicy":"needs-me"`) {
		t.Fatalf("partial change: %s", body)
	}
}
