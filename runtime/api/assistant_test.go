package api

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ensemblework/ensemble/engines/enginetest"
	"github.com/ensemblework/ensemble/runtime/assistant"
	"github.com/ensemblework/ensemble/runtime/events"
	"github.com/ensemblework/ensemble/runtime/ledger"
	"github.com/ensemblework/ensemble/runtime/models"
	"github.com/ensemblework/ensemble/runtime/records"
	"github.com/ensemblework/ensemble/runtime/store"
)

type sseFrame struct {
	Event string
	Data  map[string]any
}

func assistantFixture(t *testing.T, timeout time.Duration) (*httptest.Server, LaunchToken, *enginetest.Server, *records.Service) {
	t.Helper()
	st, err := store.Open(context.Background(), filepath.Join(t.TempDir(), "ensemble.db"))
	if err != nil {
		t.Fatal(err)
	}
	bus := events.NewBus()
	w := ledger.New(st, bus)
	rec := records.New(st, w)
	model := enginetest.NewServer(t)
	svc := assistant.New(assistant.Config{Records: rec, Store: st, Writer: w, Timeout: timeout,
		Providers: func(p, base string) (models.Provider, error) {
			switch p {
			case "openai":
				return models.NewOpenAI("test", model.URL, timeout), nil
			case "", "anthropic":
				return models.NewAnthropic("test", model.URL, timeout), nil
			}
			return nil, fmt.Errorf("Provider %q is not one of anthropic or openai.", p)
		}})
	tok := NewLaunchToken()
	a := New(Options{Version: "test", Token: tok, Keepalive: 50 * time.Millisecond, Assistant: svc},
		slog.New(slog.NewTextHandler(io.Discard, nil)), st, bus, rec)
	srv := httptest.NewServer(a.Handler())
	t.Cleanup(func() { srv.Close(); bus.Close(); st.Close() })
	return srv, tok, model, rec
}

func postTurn(t *testing.T, srv *httptest.Server, tok LaunchToken, body string) (*http.Response, []sseFrame) {
	t.Helper()
	req, _ := http.NewRequest("POST", srv.URL+"/api/assistant/turn", strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+tok.Reveal())
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		return resp, nil
	}
	var frames []sseFrame
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
			frames = append(frames, sseFrame{ev, d})
		}
	}
	return resp, frames
}

func TestAssistantTurnStreams(t *testing.T) {
	for _, wire := range []string{"anthropic", "openai"} {
		t.Run(wire, func(t *testing.T) {
			srv, tok, model, rec := assistantFixture(t, time.Minute)
			model.Script(
				enginetest.Say("On it.").Call("hub_create_tasks", map[string]any{"tasks": []map[string]any{{"title": "Draft brief"}, {"title": "Call Mira"}}}),
				enginetest.Say("Done: two tasks added."),
			)
			resp, frames := postTurn(t, srv, tok, `{"text":"create two tasks","provider":"`+wire+`","model":"m"}`)
			if resp.StatusCode != 200 || len(frames) == 0 {
				t.Fatalf("status %d frames %v", resp.StatusCode, frames)
			}
			var kinds []string
			var text strings.Builder
			for _, f := range frames {
				kinds = append(kinds, f.Event)
				if f.Event == "text" {
					text.WriteString(f.Data["text"].(string))
				}
			}
			if kinds[0] != "conversation" || kinds[len(kinds)-1] != "done" {
				t.Fatalf("events %v", kinds)
			}
			if !strings.Contains(text.String(), "On it.") || !strings.Contains(text.String(), "Done: two tasks added.") {
				t.Fatalf("text %q", text.String())
			}
			var sawTool bool
			for _, f := range frames {
				if f.Event == "tool" && f.Data["tool"].(map[string]any)["status"] == "done" {
					sawTool = true
				}
			}
			reply := frames[len(frames)-1].Data["reply"].(map[string]any)
			if !sawTool || reply["text"] != "Done: two tasks added." {
				t.Fatalf("reply %v", reply)
			}
			if tasks, _ := rec.ListTasks(context.Background(), records.TaskFilter{}); len(tasks) != 2 {
				t.Fatalf("%d tasks", len(tasks))
			}
		})
	}
}

func TestAssistantTurnErrors(t *testing.T) {
	srv, tok, model, _ := assistantFixture(t, 500*time.Millisecond)
	resp, _ := postTurn(t, srv, tok, `{"text":"","model":"m"}`)
	if resp.StatusCode != 400 {
		t.Fatalf("empty text: %d", resp.StatusCode)
	}
	resp, _ = postTurn(t, srv, tok, `{"text":"hi","model":"m","provider":"gemini"}`)
	if resp.StatusCode != 400 {
		t.Fatalf("unknown provider: %d", resp.StatusCode)
	}
	model.Script(enginetest.Hang())
	_, frames := postTurn(t, srv, tok, `{"text":"hi","model":"Slow Model","provider":"openai"}`)
	last := frames[len(frames)-1]
	if last.Event != "error" || last.Data["kind"] != "timeout" ||
		last.Data["error"] != "Slow Model did not answer within 500 milliseconds, so I stopped waiting. Ask again, or try a narrower question." {
		t.Fatalf("last frame %+v", last)
	}
}
