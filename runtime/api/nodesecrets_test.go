package api

import (
	"context"
	"encoding/json"
	"net/http"
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

// TestAttachmentRoute: a file attached in a node's room is kept, carried by the message that names
// it, read back from the room, and put on the computer by node_save_attachment; no name, another
// room's upload, and an id never uploaded are refused with a sentence.
func TestAttachmentRoute(t *testing.T) {
	f, nodes, _, model, dir := computerAPIFixture(t)
	ctx := context.Background()
	n, err := nodes.Create(ctx, node.NewNode{Name: "Ada", Role: "analyst"})
	if err != nil {
		t.Fatal(err)
	}
	upload := func(name, body string) (int, map[string]any) {
		req, _ := http.NewRequest("POST", f.srv.URL+"/api/node/rooms/"+n.DMRoomID+"/attachments?name="+name, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+f.token.Reveal())
		req.Header.Set("Content-Type", "application/octet-stream")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var out map[string]any
		json.NewDecoder(resp.Body).Decode(&out)
		return resp.StatusCode, out
	}
	if code, out := upload("", "x"); code != 400 {
		t.Fatalf("no name: %d %v", code, out)
	}
	code, out := upload("sales.csv", "region,total\nnorth,12\n")
	if code != 201 {
		t.Fatalf("upload: %d %v", code, out)
	}
	id := out["attachment"].(map[string]any)["id"].(string)
	if code, out := f.call(t, "POST", "/api/node/rooms/"+n.DMRoomID+"/messages", `{"body":"x","attachments":["nf_never"]}`); code != 400 {
		t.Fatalf("an id never uploaded: %d %v", code, out)
	}
	yes := true
	model.Script(
		enginetest.ToolCall(node.ToolSaveAttachment, map[string]any{"attachment": "sales.csv", "path": "data/"}).When(enginetest.Match{LastUserContains: "onto the computer: node_save_attachment"}),
		enginetest.Say("Saved.").When(enginetest.Match{ToolResult: &yes, LastUserContains: "Saved “sales.csv”"}),
	)
	if code, out := f.call(t, "POST", "/api/node/rooms/"+n.DMRoomID+"/messages", `{"body":"Please look at these sales.","attachments":["`+id+`"]}`); code != 201 {
		t.Fatalf("the message: %d %v", code, out)
	}
	own := filepath.Join(dir, "workspace", "nodes", n.Slug, "data", "sales.csv")
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if b, err := os.ReadFile(own); err == nil {
			if string(b) != "region,total\nnorth,12\n" {
				t.Fatalf("saved %q", b)
			}
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatal("the attachment never reached the node's folder")
}
