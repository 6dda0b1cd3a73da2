package api

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/ensemblework/ensemble/engines/enginetest"
	"github.com/ensemblework/ensemble/runtime/assistant"
	"github.com/ensemblework/ensemble/runtime/computer"
	"github.com/ensemblework/ensemble/runtime/events"
	"github.com/ensemblework/ensemble/runtime/ledger"
	"github.com/ensemblework/ensemble/runtime/models"
	"github.com/ensemblework/ensemble/runtime/needs"
	"github.com/ensemblework/ensemble/runtime/node"
	"github.com/ensemblework/ensemble/runtime/records"
	"github.com/ensemblework/ensemble/runtime/secrets"
	"github.com/ensemblework/ensemble/runtime/store"
	"github.com/ensemblework/ensemble/runtime/tools"
)

// sudoInstead is a sudo for tests: it asks $SUDO_ASKPASS for "correct horse", as sudo -A does.
const sudoInstead = `#!/bin/bash
shift 3
for i in 1 2 3; do
  pw=$("$SUDO_ASKPASS" "[sudo] password: ") || break
  [ "$pw" = "correct horse" ] && exec "$@"
done
exit 1
`

// TestSudoCardRoute: a node's sudo card is answered through its own route with a password sealed
// for this computer (purpose sudo, the card, the command's hash). A box replayed, expired, sealed
// for another card or another key, or with another purpose, is refused and the card keeps
// waiting; the right box runs the command once.
func TestSudoCardRoute(t *testing.T) {
	f, nodes, sec, model, _ := computerAPIFixture(t)
	ctx := context.Background()
	srv := f.srv
	n, err := nodes.Create(ctx, node.NewNode{Name: "Ada", Role: "developer"})
	if err != nil {
		t.Fatal(err)
	}
	model.Script(enginetest.ToolCall(node.ToolSudo, map[string]any{"command": "echo ran-as-admin", "reason": "You asked."}).When(enginetest.Match{LastUserContains: "install"}),
		enginetest.Say("Done."))
	if _, err := nodes.PostMessage(ctx, n.DMRoomID, node.Post{Body: "Please install it.", ClientID: "c1"}); err != nil {
		t.Fatal(err)
	}
	cardID := pendingCard(t, nodes)
	st, w := f.store, ledger.New(f.store, f.bus)
	status, view := f.call(t, "GET", "/api/node/sudo/"+cardID, "")
	if status != 200 || view["command"] != "echo ran-as-admin" || view["hash"] != computer.SudoHash("echo ran-as-admin") || view["purpose"] != "sudo" {
		t.Fatalf("GET the sudo card: %d %v", status, view)
	}
	key := sec.SealKey()
	origin := srv.URL
	box := func(spki, kid, purpose, decision, name string, exp time.Duration, nonce string) string {
		b, err := secrets.Seal(spki, secrets.AAD{Purpose: purpose, DeviceID: kid, DecisionID: decision, Name: name, Origin: origin,
			ExpiresAt: time.Now().Add(exp).UTC().Format("2006-01-02T15:04:05.000Z"), Nonce: nonce}, secrets.Sealed{Value: "correct horse"})
		if err != nil {
			t.Fatal(err)
		}
		raw, _ := json.Marshal(map[string]any{"action": "run", "sealed": b})
		return string(raw)
	}
	hash := view["hash"].(string)
	other, err := secrets.New(ctx, secrets.Options{DataDir: t.TempDir(), Store: st, Writer: w})
	if err != nil {
		t.Fatal(err)
	}
	ok := box(key.SPKI, key.Kid, "sudo", cardID, hash, 10*time.Minute, "bm9uY2UtZ29vZC1zaXh0ZWVuLWJ5dGVzIQ")
	for _, tc := range []struct{ name, body, code string }{
		{"another card", box(key.SPKI, key.Kid, "sudo", "msg_other", hash, 10*time.Minute, "bm9uY2UtY2FyZC1zaXh0ZWVuLWJ5dGVzIQ"), "seal_decision"},
		{"another command", box(key.SPKI, key.Kid, "sudo", cardID, computer.SudoHash("rm -rf /"), 10*time.Minute, "bm9uY2UtbmFtZS1zaXh0ZWVuLWJ5dGVzIQ"), "seal_name"},
		{"a secret's box", box(key.SPKI, key.Kid, "secret", cardID, hash, 10*time.Minute, "bm9uY2UtcHVycC1zaXh0ZWVuLWJ5dGVzIQ"), "seal_purpose"},
		{"expired", box(key.SPKI, key.Kid, "sudo", cardID, hash, -time.Minute, "bm9uY2UtZXhwZC1zaXh0ZWVuLWJ5dGVzIQ"), "seal_expired"},
		{"another key", box(other.SealKey().SPKI, other.SealKey().Kid, "sudo", cardID, hash, 10*time.Minute, "bm9uY2Uta2V5cy1zaXh0ZWVuLWJ5dGVzIQ"), "seal_key"},
	} {
		if status, out := f.call(t, "POST", "/api/node/sudo/"+cardID, tc.body, "Origin", origin); status != 400 || out["code"] != tc.code {
			t.Errorf("%s: %d %v; want 400 %s", tc.name, status, out, tc.code)
		}
	}
	if status, out := f.call(t, "POST", "/api/node/sudo/"+cardID, ok, "Origin", origin); status != 200 {
		t.Fatalf("the right box: %d %v", status, out)
	}
	if status, out := f.call(t, "POST", "/api/node/sudo/"+cardID, ok, "Origin", origin); status != 400 || out["code"] != "seal_replay" {
		t.Fatalf("the box replayed: %d %v", status, out)
	}
	_, c, err := nodes.SudoCard(ctx, cardID)
	if err != nil || c.Status != node.CardApproved || c.Sudo.ExitCode == nil || *c.Sudo.ExitCode != 0 {
		t.Fatalf("the card after the right box: %s %+v %v", c.Status, c.Sudo, err)
	}
	if status, out := f.call(t, "POST", "/api/node/sudo/"+cardID, `{"action":"maybe"}`, "Origin", origin); status != 400 {
		t.Fatalf("a bad action: %d %v", status, out)
	}
}

// computerAPIFixture is the API with nodes that have the computer tools (a stand-in sudo, this test
// binary as its askpass), the secrets store and a scripted model; the turn engine runs.
func computerAPIFixture(t *testing.T) (*fixture, *node.Service, *secrets.Store, *enginetest.Server, string) {
	t.Helper()
	dir := t.TempDir()
	ctx := context.Background()
	st, err := store.Open(ctx, filepath.Join(dir, "ensemble.db"))
	if err != nil {
		t.Fatal(err)
	}
	bus := events.NewBus()
	w := ledger.New(st, bus)
	rec := records.New(st, w)
	nd := needs.New(st, w)
	sec, err := secrets.New(ctx, secrets.Options{DataDir: dir, Store: st, Writer: w})
	if err != nil {
		t.Fatal(err)
	}
	model := enginetest.NewServer(t)
	reg := tools.HubTools()
	for _, tl := range node.Tools() {
		reg.Register(tl)
	}
	asst := assistant.New(assistant.Config{Records: rec, Store: st, Writer: w, Needs: nd, Tools: reg, Timeout: time.Minute, Log: slog.New(slog.DiscardHandler),
		Providers: func(p, base string) (models.Provider, error) {
			return models.Source{Getenv: func(string) string { return "test-key" }}.Provider("anthropic", model.URL)
		}})
	prov, mod := "anthropic", "claude-test"
	asst.SetSettings(ctx, assistant.SettingsChange{Provider: &prov, Model: &mod})
	os.MkdirAll(filepath.Join(dir, "bin"), 0o755)
	sudo := filepath.Join(dir, "bin", "sudo")
	os.WriteFile(sudo, []byte(sudoInstead), 0o755)
	self, _ := os.Executable()
	comp := computer.New(computer.Options{Home: filepath.Join(dir, "home"), DataDir: dir, Workspace: filepath.Join(dir, "workspace"),
		Temp: []string{filepath.Join(dir, "tmp")}, Store: st, Writer: w, Askpass: self, SudoProgram: sudo})
	nodes := node.New(node.Config{Store: st, Writer: w, Bus: bus, Assistant: asst, Records: rec, Needs: nd, Computer: comp, Log: slog.New(slog.DiscardHandler)})
	if err := nodes.Start(ctx); err != nil {
		t.Fatal(err)
	}
	tok := NewLaunchToken()
	a := New(Options{Version: "test", Token: tok, Keepalive: time.Minute, Assistant: asst, Needs: nd, Nodes: nodes, Secrets: sec},
		slog.New(slog.NewTextHandler(io.Discard, nil)), st, bus, rec)
	srv := httptest.NewServer(a.Handler())
	t.Cleanup(func() {
		srv.Close()
		nodes.Close()
		comp.Close()
		asst.Close(ctx)
		bus.Close()
		st.Close()
	})
	f := &fixture{srv: srv, api: a, store: st, bus: bus, token: tok}

	return f, nodes, sec, model, dir
}

// pendingCard waits for the card a node's turn posts.
func pendingCard(t *testing.T, nodes *node.Service) string {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if cards, _ := nodes.PendingCards(context.Background()); len(cards) > 0 {
			return cards[0].ID
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatal("no card")
	return ""
}
