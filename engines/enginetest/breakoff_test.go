package enginetest

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"
)

// TestBreakOff checks that a step that breaks off streams its content and then ends without the
// wire format's closing events: with a dropped connection the client's read fails, with an early
// end it reads a plain end of stream.
func TestBreakOff(t *testing.T) {
	wires := []struct {
		name, path string
		body       func(string) map[string]any
		closing    string // what only a finished reply carries
	}{
		{"anthropic", "/v1/messages", func(u string) map[string]any { return anthropicBody(u) }, "message_stop"},
		{"responses", "/v1/responses", func(u string) map[string]any { return responsesBody(u) }, "response.completed"},
		{"chat", "/v1/chat/completions", func(u string) map[string]any { return chatBody(u) }, "[DONE]"},
		{"chat finish_reason", "/v1/chat/completions", func(u string) map[string]any { return chatBody(u) }, `"finish_reason":"stop"`},
		{"gemini", "/v1beta/models/m:streamGenerateContent?alt=sse", func(u string) map[string]any { return geminiBody(u) }, "finishReason"},
	}
	for _, w := range wires {
		for _, c := range []struct {
			name   string
			step   Step
			failed bool // the client's read fails (a dropped connection)
		}{
			{"drop", Say("The first half of the answer").DropConnection(), true},
			{"end", Say("The first half of the answer").EndEarly(), false},
		} {
			t.Run(w.name+"/"+c.name, func(t *testing.T) {
				s := NewServer(t)
				s.Script(c.step)
				resp := post(t, context.Background(), s.URL+w.path, w.body("hi"))
				defer resp.Body.Close()
				body, err := io.ReadAll(resp.Body)
				switch {
				case c.failed && err == nil:
					t.Errorf("a dropped connection read as a whole body: %q", body)
				case c.failed && !errors.Is(err, io.ErrUnexpectedEOF):
					t.Errorf("read error %v, want an unexpected EOF", err)
				case !c.failed && err != nil:
					t.Errorf("an early end failed the read: %v", err)
				}
				got := string(body)
				if !strings.Contains(got, "The first half") {
					t.Errorf("the content did not arrive before the break: %q", got)
				}
				if strings.Contains(got, w.closing) {
					t.Errorf("a reply that breaks off carries %s: %q", w.closing, got)
				}
			})
		}
	}
}

// TestBreakOffNotStreamed checks that a reply that is not streamed is cut halfway through its body.
func TestBreakOffNotStreamed(t *testing.T) {
	for _, c := range []struct {
		name   string
		step   Step
		failed bool
	}{
		{"drop", Say("A whole answer that never arrives whole").DropConnection(), true},
		{"end", Say("A whole answer that never arrives whole").EndEarly(), false},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := NewServer(t)
			s.Script(c.step)
			body := anthropicBody("hi")
			body["stream"] = false
			resp := post(t, context.Background(), s.URL+"/v1/messages", body)
			defer resp.Body.Close()
			b, err := io.ReadAll(resp.Body)
			if c.failed != (err != nil) {
				t.Errorf("read error %v, want failed=%v", err, c.failed)
			}
			if len(b) == 0 || strings.Contains(string(b), "end_turn") || strings.HasSuffix(strings.TrimSpace(string(b)), "}") {
				t.Errorf("the body was not cut: %q", b)
			}
		})
	}
}

// TestBreakOffInScriptFile checks that a script file names the way a reply breaks off, and that
// ReadScript refuses one it does not know.
func TestBreakOffInScriptFile(t *testing.T) {
	dir := t.TempDir()
	good := dir + "/good.json"
	if err := (Script{Steps: []Step{Say("x").DropConnection(), Say("y").EndEarly()}}).WriteFile(good); err != nil {
		t.Fatal(err)
	}
	sc, err := ReadScript(good)
	if err != nil || sc.Steps[0].BreakOff != BreakDrop || sc.Steps[1].BreakOff != BreakEnd {
		t.Fatalf("ReadScript = %+v, %v", sc, err)
	}
	bad := dir + "/bad.json"
	writeFile(t, bad, `{"steps":[{"text":"x","break_off":"sometimes"}]}`)
	if _, err := ReadScript(bad); err == nil || !strings.Contains(err.Error(), "sometimes") {
		t.Errorf("ReadScript of an unknown break_off: %v", err)
	}
}
