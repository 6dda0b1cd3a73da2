package api

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/ensemblework/ensemble/engines/enginetest"
)

func TestSkillRoutes(t *testing.T) {
	srv, tok, model, _ := assistantFixture(t, time.Minute)
	code, body := call(t, srv, tok, "PUT", "/api/assistant/skills/standup", `{"title":"Daily stand-up","body":"Done, next, blocked."}`)
	if code != 200 || !strings.Contains(body, `"name":"standup"`) {
		t.Fatalf("put: %d %s", code, body)
	}
	// Bad input: one sentence, nothing changed.
	for _, tc := range []struct{ path, body string }{
		{"/api/assistant/skills/Bad%20Name", `{"title":"t","body":"b"}`},
		{"/api/assistant/skills/standup", `{"title":"","body":"b"}`},
		{"/api/assistant/skills/standup", `{"title":"t","body":"b","extra":1}`},
	} {
		code, body := call(t, srv, tok, "PUT", tc.path, tc.body)
		var e struct{ Error string }
		json.Unmarshal([]byte(body), &e)
		if code != 400 || e.Error == "" || !strings.HasSuffix(e.Error, ".") {
			t.Errorf("PUT %s %s: %d %s", tc.path, tc.body, code, body)
		}
	}
	code, body = call(t, srv, tok, "GET", "/api/assistant/skills/standup", "")
	if code != 200 || !strings.Contains(body, `"body":"Done, next, blocked."`) || !strings.Contains(body, `"title":"Daily stand-up"`) {
		t.Fatalf("get: %d %s", code, body)
	}
	code, body = call(t, srv, tok, "GET", "/api/assistant/skills", "")
	if code != 200 || !strings.Contains(body, `"skills":[{"name":"standup"`) {
		t.Fatalf("list: %d %s", code, body)
	}

	// A turn's first frames: its conversation, then the records it knows, before any text.
	model.Script(enginetest.Say("Hi."))
	_, frames := postTurn(t, srv, tok, `{"text":"hello","model":"m"}`)
	if len(frames) < 3 || frames[1].Event != "refs" || frames[1].Data["refs"] == nil {
		t.Fatalf("frames %+v", frames)
	}

	if code, body := call(t, srv, tok, "DELETE", "/api/assistant/skills/standup", ""); code != 204 {
		t.Fatalf("delete: %d %s", code, body)
	}
	if code, body := call(t, srv, tok, "DELETE", "/api/assistant/skills/standup", ""); code != 404 || !strings.Contains(body, "no personal skill") {
		t.Fatalf("delete again: %d %s", code, body)
	}
	if code, _ := call(t, srv, tok, "GET", "/api/assistant/skills/standup", ""); code != 404 {
		t.Fatalf("get after delete: %d", code)
	}
}
