package api

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ensemblework/ensemble/engines/enginetest"
	"github.com/ensemblework/ensemble/runtime/node"
	"github.com/ensemblework/ensemble/runtime/secrets"
)

// TestSecretCardRoute: node_secret_request posts a secret card; the page seals the value for this
// computer (the card, the secret's name) and it is saved here with the origins the owner chose.
// The node hears the name, and the value is in no model request, table or file but the store's.
func TestSecretCardRoute(t *testing.T) {
	f, nodes, sec, model, dir := computerAPIFixture(t)
	ctx := context.Background()
	n, err := nodes.Create(ctx, node.NewNode{Name: "Ada", Role: "developer"})
	if err != nil {
		t.Fatal(err)
	}
	yes := true
	model.Script(
		enginetest.ToolCall(node.ToolSecretRequest, map[string]any{"name": "STRIPE_API_KEY", "why": "To read your invoices.", "allow": []string{"https://api.stripe.com"}}).
			When(enginetest.Match{LastUserContains: "invoices"}),
		enginetest.Say("Thanks, saved.").When(enginetest.Match{ToolResult: &yes, LastUserContains: "saved STRIPE_API_KEY"}),
	)
	if _, err := nodes.PostMessage(ctx, n.DMRoomID, node.Post{Body: "Read my Stripe invoices; you need my API key.", ClientID: "c1"}); err != nil {
		t.Fatal(err)
	}
	cardID := pendingCard(t, nodes)
	status, view := f.call(t, "GET", "/api/node/secrets/"+cardID, "")
	if status != 200 || view["name"] != "STRIPE_API_KEY" || view["route"].(map[string]any)["mode"] != "sealed" {
		t.Fatalf("GET the secret card: %d %v", status, view)
	}
	const value = "sk_live_canary_4f2a9c81e7"
	key := sec.SealKey()
	origin := f.srv.URL
	box := func(name, nonce string) string {
		b, err := secrets.Seal(key.SPKI, secrets.AAD{Purpose: "secret", DeviceID: key.Kid, DecisionID: cardID, Name: name, Origin: origin,
			ExpiresAt: time.Now().Add(10 * time.Minute).UTC().Format("2006-01-02T15:04:05.000Z"), Nonce: nonce}, secrets.Sealed{Value: value})
		if err != nil {
			t.Fatal(err)
		}
		raw, _ := json.Marshal(map[string]any{"sealed": b, "allow": []string{"https://api.stripe.com"}})
		return string(raw)
	}
	if status, out := f.call(t, "POST", "/api/node/secrets/"+cardID, `{"value":"`+value+`"}`, "Origin", origin); status != 400 || out["code"] != "seal_required" {
		t.Fatalf("a plain value: %d %v", status, out)
	}
	if status, out := f.call(t, "POST", "/api/node/secrets/"+cardID, box("OTHER_NAME", "bm9uY2Utb3RoZXItc2l4dGVlbi1ieXRlcyE"), "Origin", origin); status != 400 || out["code"] != "seal_name" {
		t.Fatalf("a box for another name: %d %v", status, out)
	}
	if status, out := f.call(t, "POST", "/api/node/secrets/"+cardID, box("STRIPE_API_KEY", "bm9uY2UtcmlnaHQtc2l4dGVlbi1ieXRlcyE"), "Origin", origin); status != 200 {
		t.Fatalf("the right box: %d %v", status, out)
	}
	if v, err := sec.Get(ctx, "STRIPE_API_KEY"); err != nil || v != value {
		t.Fatalf("saved %q, %v", v, err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for len(model.Requests()) < 2 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	for _, r := range model.Requests() {
		if raw, _ := json.Marshal(r); strings.Contains(string(raw), value) {
			t.Fatal("the value reached the model")
		}
	}
	// Nowhere in the database (the store keeps it encrypted) nor any other file of the data folder.
	filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err == nil && fi.Mode().IsRegular() {
			if b, _ := os.ReadFile(p); strings.Contains(string(b), value) {
				t.Errorf("the value is in %s", p)
			}
		}
		return nil
	})
}
