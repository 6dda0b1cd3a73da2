package api

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ensemblework/ensemble/runtime/bridge/keys"
	"github.com/ensemblework/ensemble/runtime/bridge/workspace"
	"github.com/ensemblework/ensemble/runtime/ledger"
	"github.com/ensemblework/ensemble/runtime/records"
)

// withBridge mounts the bridge's routes on a fixture's server.
func withBridge(t *testing.T) *fixture {
	t.Helper()
	return addBridge(t, newFixture(t))
}

// addBridge mounts the bridge's routes on f's server.
func addBridge(t *testing.T, f *fixture) *fixture {
	t.Helper()
	w := ledger.New(f.store, f.bus)
	rec := f.api.records
	files := rec.Files(filepath.Join(t.TempDir(), "files"))
	f.api.opts.Bridge = &Bridge{Keys: keys.New(f.store, w), Work: workspace.New(f.store, rec, files), Files: files}
	f.srv.Config.Handler = f.api.Handler()
	return f
}

func TestKeyRoutes(t *testing.T) {
	f := withBridge(t)
	status, out := f.call(t, "POST", "/api/keys", `{"name":"laptop","canWrite":true}`)
	secret, _ := out["secret"].(string)
	if status != 201 || !strings.HasPrefix(secret, "ens_") || strings.HasPrefix(secret, "ens_launch_") {
		t.Fatalf("create: %d %v", status, out)
	}
	key := out["key"].(map[string]any)
	if key["canWrite"] != true || key["hint"] != secret[len(secret)-4:] {
		t.Errorf("key = %v", key)
	}
	var hash string
	f.store.Reader().QueryRow("SELECT hash FROM bridge_keys").Scan(&hash)
	if hash == "" || strings.Contains(hash, secret) {
		t.Errorf("stored %q", hash)
	}
	if status, out = f.call(t, "POST", "/api/keys", `{"name":""}`); status != 400 {
		t.Errorf("empty name: %d %v", status, out)
	}
	// A key reaches the bridge's routes, and nothing else: it cannot make a key or read records.
	if status, out = f.call(t, "GET", "/api/bridge/whoami", "", "Authorization", "Bearer "+secret); status != 200 || out["keyName"] != "laptop" || out["canWrite"] != true {
		t.Errorf("whoami: %d %v", status, out)
	}
	for _, c := range []struct{ method, path, body string }{
		{"POST", "/api/keys", `{"name":"minted"}`}, {"GET", "/api/keys", ""}, {"GET", "/api/tasks", ""},
	} {
		if status, out = f.call(t, c.method, c.path, c.body, "Authorization", "Bearer "+secret); status != 401 {
			t.Errorf("key on %s %s: %d %v", c.method, c.path, status, out)
		}
	}
	if n := f.count(t, "bridge_keys"); n != 1 {
		t.Errorf("keys = %d", n)
	}
	// The launch token does not reach the bridge.
	if status, out = f.call(t, "GET", "/api/bridge/whoami", ""); status != 401 || !strings.Contains(out["error"].(string), "launch token") {
		t.Errorf("launch token on the bridge: %d %v", status, out)
	}
	if status, _ = f.call(t, "GET", "/api/bridge/whoami", "", "Authorization", "Bearer "+secret, "Host", "evil.example"); status != 403 {
		t.Errorf("foreign host: %d", status)
	}
	status, out = f.call(t, "GET", "/api/keys", "")
	if list := out["keys"].([]any); status != 200 || len(list) != 1 || strings.Contains(mustString(out), secret) {
		t.Errorf("list: %d %v", status, out)
	}
	id := key["id"].(string)
	if status, out = f.call(t, "DELETE", "/api/keys/"+id, ""); status != 200 || out["key"].(map[string]any)["revokedAt"] == nil {
		t.Errorf("revoke: %d %v", status, out)
	}
	if status, out = f.call(t, "GET", "/api/bridge/whoami", "", "Authorization", "Bearer "+secret); status != 401 || !strings.Contains(out["error"].(string), "revoked") {
		t.Errorf("revoked key: %d %v", status, out)
	}
	if status, _ = f.call(t, "DELETE", "/api/keys/key_nope", ""); status != 404 {
		t.Errorf("revoke unknown: %d", status)
	}
}

func TestBridgeWriteGate(t *testing.T) {
	f := withBridge(t)
	_, out := f.call(t, "POST", "/api/keys", `{"name":"reader"}`)
	reader := out["secret"].(string)
	_, out = f.call(t, "POST", "/api/keys", `{"name":"writer","canWrite":true}`)
	writer := out["secret"].(string)
	for _, c := range []struct{ method, path, body string }{
		{"POST", "/api/bridge/write/tasks", `{"title":"x"}`},
		{"POST", "/api/bridge/write/files", `{"filename":"a.txt","dataBase64":"YQ=="}`},
		{"POST", "/api/bridge/act/hub_create_project", `{"input":{"name":"x"}}`},
	} {
		if status, out := f.call(t, c.method, c.path, c.body, "Authorization", "Bearer "+reader); status != 403 || !strings.Contains(out["error"].(string), "may only read") {
			t.Errorf("reader %s: %d %v", c.path, status, out)
		}
	}
	status, out := f.call(t, "POST", "/api/bridge/write/tasks", `{"title":"From the editor"}`, "Authorization", "Bearer "+writer)
	if status != 200 {
		t.Fatalf("writer: %d %v", status, out)
	}
	id := out["task"].(map[string]any)["id"].(string)
	if status, out = f.call(t, "PATCH", "/api/bridge/write/tasks/"+id, `{"status":"done","matchTitle":"Other"}`, "Authorization", "Bearer "+writer); status != 409 {
		t.Errorf("matchTitle: %d %v", status, out)
	}
	if status, out = f.call(t, "PATCH", "/api/bridge/write/tasks/"+id, `{"status":"waiting_approval"}`, "Authorization", "Bearer "+writer); status != 409 || out["allowed"] == nil && !strings.Contains(out["error"].(string), "can move to") {
		t.Errorf("refused move: %d %v", status, out)
	}
	if status, _ = f.call(t, "POST", "/api/bridge/search", `{"query":"editor"}`, "Authorization", "Bearer "+writer, "X-Ensemble-Space", "Elsewhere"); status != 404 {
		t.Errorf("other space: %d", status)
	}
	// Bad bodies get 400 and one sentence, and write nothing, as on the rest of the API.
	before := f.count(t, "tasks")
	big := `{"title":"` + strings.Repeat("x", maxBody) + `"}`
	for _, c := range []struct{ method, path, body string }{
		{"POST", "/api/bridge/write/tasks", big},
		{"PATCH", "/api/bridge/write/tasks/" + id, big},
		{"POST", "/api/bridge/search", big},
		{"POST", "/api/bridge/write/tasks", `{"title":`},
		{"POST", "/api/bridge/write/tasks", `{"title":"x","colour":"red"}`},
		{"POST", "/api/bridge/write/tasks", `{"title":7}`},
	} {
		status, out := f.call(t, c.method, c.path, c.body, "Authorization", "Bearer "+writer)
		if msg, _ := out["error"].(string); status != 400 || msg == "" {
			t.Errorf("%s %s (%d bytes): %d %v", c.method, c.path, len(c.body), status, msg)
		}
	}
	if n := f.count(t, "tasks"); n != before {
		t.Errorf("bad bodies wrote tasks: %d, was %d", n, before)
	}
	if status, _ = f.call(t, "GET", "/api/bridge/nope", "", "Authorization", "Bearer "+writer); status != 404 {
		t.Errorf("unknown route: %d", status)
	}
	if status, _ = f.call(t, "GET", "/api/bridge/nope", "", "Authorization", ""); status != 401 {
		t.Errorf("unknown route without a key: %d", status)
	}
	_ = records.PersonalSpace
}

func mustString(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
