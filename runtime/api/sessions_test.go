package api

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ensemblework/ensemble/engines"
	"github.com/ensemblework/ensemble/runtime/events"
	"github.com/ensemblework/ensemble/runtime/jobs"
	"github.com/ensemblework/ensemble/runtime/ledger"
	"github.com/ensemblework/ensemble/runtime/records"
	"github.com/ensemblework/ensemble/runtime/sessions"
	"github.com/ensemblework/ensemble/runtime/store"
)

func newSessionsFixture(t *testing.T) (*fixture, string) {
	t.Helper()
	dir := t.TempDir()
	st, err := store.Open(context.Background(), filepath.Join(dir, "ensemble.db"))
	if err != nil {
		t.Fatal(err)
	}
	bus := events.NewBus()
	w := ledger.New(st, bus)
	rec := records.New(st, w)
	ss := sessions.New(sessions.Options{Store: st, Writer: w})
	js := jobs.New(jobs.Options{Store: st, Writer: w, Records: rec, DataDir: filepath.Join(dir, "data"), Sessions: ss,
		Drivers: map[string]engines.Driver{"standin": standIn{}}})
	if err := js.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	tok := NewLaunchToken()
	a := New(Options{Version: "test", Token: tok, Keepalive: 50 * time.Millisecond, Jobs: js, Sessions: ss},
		slog.New(slog.NewTextHandler(io.Discard, nil)), st, bus, rec)
	srv := httptest.NewServer(a.Handler())
	t.Cleanup(func() {
		js.Close()
		bus.Close()
		srv.Close()
		st.Close()
	})
	folder, _ := filepath.EvalSymlinks(t.TempDir())
	return &fixture{srv: srv, api: a, store: st, bus: bus, token: tok}, folder
}

func (f *fixture) runToEnd(t *testing.T, body string) map[string]any {
	t.Helper()
	code, j := f.call(t, "POST", "/api/agent/assign", body)
	if code != http.StatusCreated {
		t.Fatalf("assign: %d %v", code, j)
	}
	id := j["id"].(string)
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		_, j = f.call(t, "GET", "/api/agent/jobs/"+id, "")
		if j["status"] == "done" {
			return j
		}
	}
	t.Fatalf("run %s did not end: %v", id, j["status"])
	return nil
}

func TestSessionsOverHTTP(t *testing.T) {
	f, folder := newSessionsFixture(t)
	a := f.runToEnd(t, `{"title": "Build the ranking API", "agent": "standin", "folder": "`+folder+`", "newSession": true}`)
	b := f.runToEnd(t, `{"title": "Page the results", "continue": "`+a["id"].(string)+`"}`)

	code, body := f.call(t, "GET", "/api/agent/sessions", "")
	list, _ := body["sessions"].([]any)
	if code != http.StatusOK || len(list) != 1 {
		t.Fatalf("list: %d %v", code, body)
	}
	s := list[0].(map[string]any)
	if s["id"] != a["id"] || s["agent"] != "standin" || s["status"] != "idle" || s["resumable"] != true ||
		s["runCount"] != 2.0 || s["firstTask"].(map[string]any)["title"] != "Build the ranking API" ||
		s["latestTask"].(map[string]any)["title"] != "Page the results" || s["folder"] != folder {
		t.Errorf("session: %v", s)
	}
	if _, body := f.call(t, "GET", "/api/agent/sessions?taskId="+b["taskId"].(string)+"&q=page&limit=5", ""); len(body["sessions"].([]any)) != 1 {
		t.Errorf("filtered: %v", body)
	}
	if _, body := f.call(t, "GET", "/api/agent/sessions?q=nothing+like+it", ""); len(body["sessions"].([]any)) != 0 {
		t.Errorf("no match: %v", body)
	}
	if code, body := f.call(t, "GET", "/api/agent/sessions?limit=0", ""); code != http.StatusBadRequest || body["error"] != "limit must be a number from 1 to 200." {
		t.Errorf("bad limit: %d %v", code, body)
	}
	code, body = f.call(t, "GET", "/api/agent/sessions/"+b["id"].(string), "")
	if runs, _ := body["runs"].([]any); code != http.StatusOK || body["id"] != a["id"] || len(runs) != 2 {
		t.Fatalf("get: %d %v", code, body)
	}
	if code, body := f.call(t, "GET", "/api/agent/sessions/job_nope", ""); code != http.StatusNotFound || !strings.Contains(body["error"].(string), "no agent session") {
		t.Errorf("missing: %d %v", code, body)
	}
	if code, _ := f.call(t, "GET", "/api/agent/sessions", "", "Authorization", ""); code != http.StatusUnauthorized {
		t.Errorf("without the token: %d", code)
	}

	if code, body := f.call(t, "DELETE", "/api/agent/sessions/"+a["id"].(string), ""); code != http.StatusOK || body["id"] != a["id"] {
		t.Fatalf("delete: %d %v", code, body)
	}
	if code, _ := f.call(t, "DELETE", "/api/agent/sessions/"+a["id"].(string), ""); code != http.StatusConflict {
		t.Errorf("delete twice: %d", code)
	}
	c := f.runToEnd(t, `{"title": "Sort the results", "continue": "`+b["id"].(string)+`"}`)
	if c["continues"] != b["id"] {
		t.Errorf("continuing a deleted session: %v", c)
	}
	_, body = f.call(t, "GET", "/api/agent/sessions", "")
	list = body["sessions"].([]any)
	if len(list) != 2 || list[0].(map[string]any)["id"] != c["id"] || list[1].(map[string]any)["deletedAt"] == nil {
		t.Errorf("after the deletion: %v", list)
	}
}
