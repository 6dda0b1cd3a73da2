package bridge_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ensemblework/ensemble/bridge"
	"github.com/ensemblework/ensemble/runtime/records"
)

func TestRuntimeNotRunning(t *testing.T) {
	r := startRuntime(t)
	key := r.key(t, "reader", true)
	cs := connect(t, r, key, t.TempDir())
	mustCall(t, cs, "ensemble_tasks", map[string]any{})
	os.Remove(filepath.Join(r.data, "api.json"))
	for name, args := range map[string]map[string]any{"ensemble_brief": {"task": "x"}, "ensemble_search": {"query": "x"},
		"ensemble_tasks": {}, "ensemble_today": {}, "ensemble_create_task": {"title": "x"}, "ensemble_get_file": {"id": "fil_1"}} {
		mustFail(t, cs, name, args, bridge.NotRunning)
	}
	// api.json names a runtime that stopped without removing it.
	dead := httptest.NewServer(http.NotFoundHandler())
	dead.Close()
	r.url = dead.URL
	r.writeAPIFile(t)
	mustFail(t, cs, "ensemble_tasks", map[string]any{}, bridge.NotRunning)
	// The runtime comes back on another address: api.json is read again, and the bridge works.
	r.url = r.srv.URL
	r.writeAPIFile(t)
	mustCall(t, cs, "ensemble_tasks", map[string]any{})
	// A bridge started while the runtime was down offers every tool, each saying so.
	os.Remove(filepath.Join(r.data, "api.json"))
	cs = connect(t, r, key, t.TempDir())
	if tools := toolNames(t, cs); tools["ensemble_create_task"] == nil {
		t.Errorf("tools while down: %v", tools)
	}
	mustFail(t, cs, "ensemble_gaps", map[string]any{}, bridge.NotRunning)
	if _, err := cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: "ensemble://tasks"}); err == nil || !strings.Contains(err.Error(), "not running") {
		t.Errorf("resource while down: %v", err)
	}
}

func TestKeyRefusals(t *testing.T) {
	r := startRuntime(t)
	r.seed(t)
	for _, tc := range []struct{ name, key, want string }{
		{"no key", "", "ENSEMBLE_KEY is not set"},
		{"not a key", "sk-123", "must be an Ensemble key starting with ens_"},
		{"launch token", "ens_launch_abcdefghijklmnopqrstuvwxyz", "launch token"},
		{"unknown key", "ens_" + strings.Repeat("x", 43), "not one this Ensemble made"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cs := connect(t, r, tc.key, t.TempDir())
			// A configuration error, never an empty brief.
			mustFail(t, cs, "ensemble_brief", map[string]any{"task": "Fix the login retry"}, tc.want)
			mustFail(t, cs, "ensemble_search", map[string]any{"query": "login"}, tc.want)
		})
	}
	key := r.key(t, "soon revoked", true)
	cs := connect(t, r, key, t.TempDir())
	mustCall(t, cs, "ensemble_tasks", map[string]any{})
	ks, _ := r.keys.List(context.Background())
	if _, err := r.keys.Revoke(context.Background(), ks[0].ID); err != nil {
		t.Fatal(err)
	}
	mustFail(t, cs, "ensemble_tasks", map[string]any{}, "was revoked")
	mustFail(t, cs, "ensemble_create_task", map[string]any{"title": "after revoke"}, "was revoked")
	// Direct calls: no token, a wrong token, the launch token, a cookie: all refused.
	for _, tok := range []string{"", "ens_wrongwrongwrongwrongwrong", "ens_launch_x", key} {
		if status, body := r.post(t, tok, "GET", "/api/bridge/whoami", ""); status != 401 {
			t.Errorf("token %q: %d %s", tok[:min(8, len(tok))], status, body)
		}
	}
}

func TestResources(t *testing.T) {
	r := startRuntime(t)
	s := r.seed(t)
	cs := connect(t, r, r.key(t, "reader", false), t.TempDir())
	ctx := context.Background()
	list, err := cs.ListResources(ctx, nil)
	if err != nil || len(list.Resources) != 10 {
		t.Fatalf("resources: %v %d", err, len(list.Resources))
	}
	tmpls, err := cs.ListResourceTemplates(ctx, nil)
	if err != nil || len(tmpls.ResourceTemplates) != 6 {
		t.Fatalf("templates: %v %v", err, tmpls)
	}
	for _, uri := range []string{"ensemble://tasks", "ensemble://projects", "ensemble://repos", "ensemble://skills", "ensemble://people",
		"ensemble://deliverables", "ensemble://meetings", "ensemble://decisions", "ensemble://today", "ensemble://gaps",
		"ensemble://tasks/" + s.task.ID, "ensemble://projects/" + s.project.ID, "ensemble://repos/" + s.repo.ID,
		"ensemble://people/" + s.ada.ID, "ensemble://items/page/" + s.page.ID} {
		res, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
		if err != nil || len(res.Contents) != 1 || res.Contents[0].MIMEType != "application/json" {
			t.Errorf("%s: %v %v", uri, err, res)
		}
	}
	res, _ := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "ensemble://tasks/" + s.task.ID})
	if !strings.Contains(res.Contents[0].Text, records.Handle("task", s.task.ID)) {
		t.Errorf("task resource = %.200s", res.Contents[0].Text)
	}
	for _, uri := range []string{"ensemble://tasks/tsk_0000000000000000", "ensemble://skills/skl_1", "ensemble://items/task/tsk_0000000000000000"} {
		if _, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri}); err == nil {
			t.Errorf("%s: no error", uri)
		}
	}
}

// TestGrantsLearnedWhenTheRuntimeComesUp starts a bridge for a read-only key while the runtime is
// down: it offers every tool; once the runtime answers, the write tools go and the client is told.
func TestGrantsLearnedWhenTheRuntimeComesUp(t *testing.T) {
	r := startRuntime(t)
	key := r.key(t, "reader", false)
	os.Remove(filepath.Join(r.data, "api.json"))
	ctx := context.Background()
	b := bridge.New(ctx, bridge.Config{DataDir: r.data, Key: key, Dir: t.TempDir(), Local: true, Version: "test"})
	if _, _, _, known := b.Whoami(); known {
		t.Fatal("grants known while the runtime is down")
	}
	ct, st := mcp.NewInMemoryTransports()
	if _, err := b.Server().Connect(ctx, st, nil); err != nil {
		t.Fatal(err)
	}
	changed := make(chan struct{}, 4)
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { changed <- struct{}{} },
	}).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if tools := toolNames(t, cs); tools["ensemble_create_task"] == nil {
		t.Fatalf("tools while down: %v", tools)
	}
	mustFail(t, cs, "ensemble_tasks", map[string]any{}, bridge.NotRunning)

	r.writeAPIFile(t)
	mustCall(t, cs, "ensemble_tasks", map[string]any{})
	select {
	case <-changed:
	case <-time.After(10 * time.Second):
		t.Fatal("no notifications/tools/list_changed once the runtime answered")
	}
	tools := toolNames(t, cs)
	for _, n := range []string{"ensemble_create_task", "ensemble_update_task", "ensemble_upload_file"} {
		if tools[n] != nil {
			t.Errorf("%s still offered to a read-only key", n)
		}
	}
	if tools["ensemble_tasks"] == nil {
		t.Error("the read tools went too")
	}
	if name, canWrite, _, known := b.Whoami(); !known || canWrite || name != "reader" {
		t.Errorf("whoami = %q %v %v", name, canWrite, known)
	}
}
