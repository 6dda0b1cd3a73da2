package api

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"

	"github.com/ensemblework/ensemble/runtime/ledger"
	"github.com/ensemblework/ensemble/runtime/node"
)

// hook calls a routine's webhook as another program does: no launch token, no Origin.
func hook(t *testing.T, base, id, token, body string, headers ...string) (int, map[string]any) {
	t.Helper()
	req, _ := http.NewRequest("POST", base+"/api/node/hooks/routines/"+id, strings.NewReader(body))
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	json.NewDecoder(resp.Body).Decode(&out)
	return resp.StatusCode, out
}

// A webhook routine's delivery sent twice makes one run; every refusal is the same 403; the
// routes list, change, run and delete routines.
func TestRoutineWebhookOnce(t *testing.T) {
	f := newNodeFixture(t)
	ada := f.mustCall(t, 201, "POST", "/api/node/nodes", `{"name":"Ada","slug":"ada"}`)
	rt := f.mustCall(t, 201, "POST", "/api/node/routines", `{"nodeId":"ada","instruction":"Triage new issues.","trigger":{"kind":"webhook"}}`)
	id, token := rt["id"].(string), rt["token"].(string)
	if !strings.HasPrefix(token, "rth_") || rt["roomId"] != ada["dmRoomId"] || rt["notify"] != "always" {
		t.Fatalf("created %v", rt)
	}
	if got := f.mustCall(t, 200, "GET", "/api/node/routines/"+id, ""); got["token"] != nil {
		t.Fatalf("the token is shown again: %v", got)
	}

	body := `{"action":"opened"}`
	code, first := hook(t, f.srv.URL, id, token, body, "X-GitHub-Delivery", "gh-1")
	if code != http.StatusAccepted || first["runId"] == nil {
		t.Fatalf("first delivery: %d %v", code, first)
	}
	code, second := hook(t, f.srv.URL, id, token, body, "X-GitHub-Delivery", "gh-1")
	if code != http.StatusOK || second["duplicate"] != true {
		t.Fatalf("the same delivery again: %d %v", code, second)
	}
	// without a delivery id, the body's hash stands for one
	for i, want := range []int{http.StatusAccepted, http.StatusOK} {
		if code, out := hook(t, f.srv.URL, id, token, "no id"); code != want {
			t.Fatalf("call %d without a delivery id: %d %v, want %d", i+1, code, out, want)
		}
	}
	var refusal string
	for _, c := range []struct{ name, id, token string }{
		{"no token", id, ""},
		{"wrong token", id, "rth_nope"},
		{"launch token", id, f.token.Reveal()},
		{"no such routine", "rtn_nope", token},
	} {
		code, out := hook(t, f.srv.URL, c.id, c.token, body, "X-Request-Id", c.name)
		msg, _ := out["error"].(string)
		if code != http.StatusForbidden || msg == "" || refusal != "" && msg != refusal {
			t.Errorf("%s: %d %q, want the one 403", c.name, code, msg)
		}
		refusal = msg
	}
	req, _ := http.NewRequest("POST", f.srv.URL+"/api/node/hooks/routines/"+id+"?token="+token, strings.NewReader("plain text"))
	req.Header.Set("Idempotency-Key", "k-2")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusAccepted {
		t.Fatalf("?token=: %d", resp.StatusCode)
	}
	code, out := hook(t, f.srv.URL, id, token, strings.Repeat("x", maxHookBody+1), "X-Request-Id", "big")
	if msg, _ := out["error"].(string); code != http.StatusRequestEntityTooLarge || !strings.Contains(msg, "at most 256 KB") {
		t.Fatalf("oversized: %d %v", code, out)
	}

	runs := f.mustCall(t, 200, "GET", "/api/node/routines/"+id+"/runs", "")["runs"].([]any)
	if len(runs) != 1 {
		t.Fatalf("runs = %v, want the two deliveries gathered in one window", runs)
	}
	changes := runs[0].(map[string]any)["changes"].([]any)
	if len(changes) != 3 || !strings.Contains(changes[0].(string), "gh-1") || !strings.Contains(changes[1].(string), "sha256:") ||
		!strings.Contains(changes[2].(string), "plain text") {
		t.Fatalf("changes = %v, want gh-1, the call without an id and the ?token= call, once each", changes)
	}
	var deliveries int
	f.store.Reader().QueryRow("SELECT count(*) FROM node_hook_deliveries").Scan(&deliveries)
	if deliveries != 3 {
		t.Fatalf("%d deliveries kept, want 3", deliveries)
	}

	old := token
	token = f.mustCall(t, 200, "POST", "/api/node/routines/"+id+"/token", "")["token"].(string)
	if code, _ := hook(t, f.srv.URL, id, old, body, "X-Request-Id", "after"); code != http.StatusForbidden {
		t.Fatalf("the old token after renewal: %d", code)
	}
	f.mustCall(t, 200, "PATCH", "/api/node/routines/"+id, `{"status":"paused"}`)
	if code, _ := hook(t, f.srv.URL, id, token, body, "X-Request-Id", "paused"); code != http.StatusForbidden {
		t.Fatalf("a paused routine's hook: %d", code)
	}
	run := f.mustCall(t, 201, "POST", "/api/node/routines/"+id+"/run", "")
	if run["status"] != "started" || !strings.HasPrefix(run["key"].(string), "manual:") {
		t.Fatalf("run now = %v", run)
	}
	list := f.mustCall(t, 200, "GET", "/api/node/routines?nodeId=ada", "")["routines"].([]any)
	if len(list) != 1 {
		t.Fatalf("list = %v", list)
	}
	f.mustCall(t, 400, "POST", "/api/node/routines", `{"nodeId":"ada","instruction":"x","trigger":{"kind":"schedule","cron":"soon"}}`)
	f.mustCall(t, 204, "DELETE", "/api/node/routines/"+id, "")
	f.mustCall(t, 404, "GET", "/api/node/routines/"+id, "")
}

// Through the relay a webhook needs no paired phone and no Origin, only its token; every other
// write there still does.
func TestRoutineWebhookThroughRelay(t *testing.T) {
	var nodes *node.Service
	f := newRelayFixtureWith(t, testRelayHost, func(s *Server) {
		w := ledger.New(s.store, s.bus)
		nodes = node.New(node.Config{Store: s.store, Writer: w, Bus: s.bus, Records: s.records, Log: slog.New(slog.DiscardHandler)})
		s.opts.Nodes = nodes
	})
	t.Cleanup(nodes.Close)
	ctx := context.Background()
	n, err := nodes.Create(ctx, node.NewNode{Name: "Ada"})
	if err != nil {
		t.Fatal(err)
	}
	rt, err := nodes.CreateRoutine(ctx, node.NewRoutine{Node: n.ID, Instruction: "Triage.", Trigger: node.Trigger{Kind: node.TriggerWebhook}})
	if err != nil {
		t.Fatal(err)
	}
	resp := f.phone(t, "POST", "/api/node/hooks/routines/"+rt.ID, `{"a":1}`, "", "Authorization", "Bearer "+rt.Token, "X-Request-Id", "r-1")
	if resp.StatusCode != http.StatusAccepted {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("webhook through the relay: %d %s", resp.StatusCode, b)
	}
	if resp := f.phone(t, "POST", "/api/node/hooks/routines/"+rt.ID, `{"a":1}`, "", "X-Request-Id", "r-2"); resp.StatusCode != http.StatusForbidden {
		t.Fatalf("no token through the relay: %d", resp.StatusCode)
	}
	if resp := f.phone(t, "POST", "/api/node/routines/"+rt.ID+"/run", "", "", "Authorization", "Bearer "+rt.Token); resp.StatusCode != http.StatusForbidden {
		t.Fatalf("another route through the relay with the hook's token: %d", resp.StatusCode)
	}
}
