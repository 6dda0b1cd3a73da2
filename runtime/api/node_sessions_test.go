package api

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http/httptest"
	"path/filepath"
	"testing"
	"time"

	"github.com/ensemblework/ensemble/runtime/assistant"
	"github.com/ensemblework/ensemble/runtime/events"
	"github.com/ensemblework/ensemble/runtime/jobs"
	"github.com/ensemblework/ensemble/runtime/ledger"
	"github.com/ensemblework/ensemble/runtime/models"
	"github.com/ensemblework/ensemble/runtime/needs"
	"github.com/ensemblework/ensemble/runtime/node"
	"github.com/ensemblework/ensemble/runtime/records"
	"github.com/ensemblework/ensemble/runtime/store"
	"github.com/ensemblework/ensemble/runtime/tools"
	"github.com/ensemblework/ensemble/runtime/tools/toolstest"
)

// The session routes of spec 002 §8.9, over real runs of a stand-in agent: a session started in
// the Hub is read but not controlled until it is handed to a node; refusals are 409 with a
// sentence, bad bodies 400.
func TestNodeSessionRoutes(t *testing.T) {
	st, err := store.Open(context.Background(), filepath.Join(t.TempDir(), "ensemble.db"))
	if err != nil {
		t.Fatal(err)
	}
	bus := events.NewBus()
	w := ledger.New(st, bus)
	rec := records.New(st, w)
	nd := needs.New(st, w)
	ag := toolstest.NewAgents(t, st, w, rec)
	asst := assistant.New(assistant.Config{Records: rec, Store: st, Writer: w, Needs: nd, Log: slog.New(slog.DiscardHandler),
		Providers: func(p, base string) (models.Provider, error) {
			return nil, fmt.Errorf("No model is reached in this test.")
		}})
	nodes := node.New(node.Config{Store: st, Writer: w, Bus: bus, Assistant: asst, Records: rec, Needs: nd, Log: slog.New(slog.DiscardHandler),
		Jobs: ag.Jobs, Sessions: ag.Sessions, Runs: tools.NewRuns(ag.Jobs, ag.Sessions, nil)})
	tok := NewLaunchToken()
	a := New(Options{Version: "test", Token: tok, Keepalive: time.Minute, Assistant: asst, Needs: nd, Nodes: nodes},
		slog.New(slog.NewTextHandler(io.Discard, nil)), st, bus, rec)
	srv := httptest.NewServer(a.Handler())
	t.Cleanup(func() { srv.Close(); nodes.Close(); asst.Close(context.Background()); bus.Close(); st.Close() })
	f := &nodeFixture{fixture: &fixture{srv: srv, api: a, store: st, bus: bus, token: tok}, nodes: nodes, w: w}

	ctx := context.Background()
	hub, err := ag.Jobs.Assign(ctx, jobs.AssignRequest{Title: "Fix the login", Agent: "stand-in", Folder: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for j, _ := ag.Jobs.Get(ctx, hub.ID); !j.Status.Ended(); j, _ = ag.Jobs.Get(ctx, hub.ID) {
		if time.Now().After(deadline) {
			t.Fatal("the Hub's run did not end")
		}
		time.Sleep(10 * time.Millisecond)
	}
	ada := f.mustCall(t, 201, "POST", "/api/node/nodes", `{"name":"Ada"}`)
	path := "/api/node/sessions/" + hub.ID
	for _, c := range []struct {
		name, method, path, body string
		want                     int
		sentence                 string
	}{
		{"unknown session", "GET", "/api/node/sessions/job_nope", ``, 404, `There is no session "job_nope".`},
		{"unmanaged", "POST", path + "/control", `{"action":"queue","prompt":"Go on."}`, 409, "No node manages this session; hand it to one of your nodes first."},
		{"bad action", "POST", path + "/control", `{"action":"dance"}`, 400, `action is queue, steer, replace or stop, not "dance".`},
		{"no prompt", "POST", path + "/control", `{"action":"steer"}`, 400, "Say what the agent should do (prompt)."},
		{"unknown field", "POST", path + "/control", `{"action":"stop","when":"now"}`, 400, `Unknown field "when".`},
		{"bad JSON", "POST", path + "/control", `{"action":`, 400, "The body is not valid JSON: it ends too soon."},
		{"hand over to nobody", "POST", path + "/hand-over", `{}`, 400, `Say which node takes the session: {"nodeId": "…"}.`},
		{"delete unmanaged", "DELETE", path, ``, 409, "No node manages this session; hand it to one of your nodes first."},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, body := f.call(t, c.method, c.path, c.body)
			if got != c.want || body["error"] != c.sentence {
				t.Fatalf("got %d %q, want %d %q", got, body["error"], c.want, c.sentence)
			}
		})
	}

	got := f.mustCall(t, 200, "POST", path+"/hand-over", `{"nodeId":"`+ada["id"].(string)+`"}`)
	if got["ok"] != true || got["nodeId"] != ada["id"] {
		t.Fatalf("hand-over answered %v", got)
	}
	list := f.mustCall(t, 200, "GET", "/api/node/sessions", ``)
	if ss := list["sessions"].([]any); len(ss) != 1 || ss[0].(map[string]any)["nodeId"] != ada["id"] {
		t.Fatalf("the sessions are %v", list)
	}
	res := f.mustCall(t, 200, "POST", path+"/control", `{"action":"queue","prompt":"Add the test too."}`)
	if res["ok"] != true || res["id"] == "" {
		t.Fatalf("queue answered %v", res)
	}
	code, body := f.call(t, "POST", path+"/queue", `{"order":["nrn_stale"]}`)
	if code != 409 {
		t.Fatalf("a stale order answered %d %v, want 409", code, body)
	}
	code, body = f.call(t, "DELETE", path+"/queue/nrn_nope", ``)
	if code != 409 {
		t.Fatalf("cancelling a message not queued answered %d %v, want 409", code, body)
	}
	one := f.mustCall(t, 200, "GET", path, ``)
	if s := one["session"].(map[string]any); s["id"] != hub.ID || s["nodeId"] != ada["id"] || len(s["runs"].([]any)) != 1 {
		t.Fatalf("the session is %v", one)
	}
	if code, body := f.call(t, "DELETE", path, ``); code != 204 {
		t.Fatalf("delete answered %d %v, want 204", code, body)
	}
	if code, body := f.call(t, "DELETE", path, ``); code != 409 || body["error"] != "This agent session was already deleted." {
		t.Fatalf("a second delete answered %d %v, want 409", code, body)
	}
}
