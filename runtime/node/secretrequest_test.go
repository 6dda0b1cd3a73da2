package node

import (
	"context"
	"fmt"
	"testing"

	"github.com/ensemblework/ensemble/engines/enginetest"
	"github.com/ensemblework/ensemble/runtime/jobs"
)

// A secret saved through a node's card is what the node's runs in that room carry; the node hears
// its name only.
func TestSecretRequestCarriedByRuns(t *testing.T) {
	f := newFixture(t)
	n := f.node("Ada")
	yes := true
	f.model.Script(
		enginetest.ToolCall(ToolSecretRequest, map[string]any{"name": "STRIPE_API_KEY", "why": "For your invoices."}).When(enginetest.Match{LastUserContains: "API key"}),
		enginetest.Say("Saved, thanks.").When(enginetest.Match{ToolResult: &yes, LastUserContains: "saved STRIPE_API_KEY"}),
	)
	f.post(n.DMRoomID, "Here is where you need my Stripe API key.")
	var card Message
	f.waitFor("the secret card", func() bool {
		for _, m := range f.messages(n.DMRoomID) {
			if m.Kind == KindApproval {
				card = m
				return true
			}
		}
		return false
	})
	ctx := context.Background()
	if _, err := f.svc.Answer(ctx, card.ID, Approve, "browser"); err == nil {
		t.Fatal("a secret card was approved without its value")
	}
	var saved string
	if _, err := f.svc.AnswerSecret(ctx, card.ID, "browser", []string{"https://api.stripe.com"}, func(name string, allow []string) error {
		saved = fmt.Sprint(name, " ", allow)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if saved != "STRIPE_API_KEY [https://api.stripe.com]" {
		t.Fatalf("saved %q", saved)
	}
	f.waitFor("the reply", func() bool { return len(f.nodeTexts(n.DMRoomID)) == 1 })
	req := jobs.AssignRequest{}
	f.svc.withSavedSecrets(ctx, &req, n.DMRoomID)
	if req.Settings.Secrets == nil || fmt.Sprint(*req.Settings.Secrets) != "[STRIPE_API_KEY]" {
		t.Fatalf("a run in the room carries %v", req.Settings.Secrets)
	}
	var decisions int
	f.st.Reader().QueryRow("SELECT count(*) FROM decisions WHERE body LIKE '%STRIPE_API_KEY%'").Scan(&decisions)
	if decisions != 0 {
		t.Fatal("a secret card was put on Needs me")
	}
}
