package assistant

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/ensemblework/ensemble/engines/enginetest"
	"github.com/ensemblework/ensemble/runtime/records"
)

// TestKnownSecretsNeverReachTheModel: a secret kept on this computer that the person pasted into a
// page, and into their message, is hidden in everything the model is sent and the tool row shows.
func TestKnownSecretsNeverReachTheModel(t *testing.T) {
	const value = "Zq8-canary-hidden-7c2e"
	for _, wire := range wires {
		t.Run(wire, func(t *testing.T) {
			f := newFixture(t, wire, time.Minute)
			f.svc.cfg.Hide = func(s string) string { return strings.ReplaceAll(s, value, "[secret CANARY]") }
			ctx := context.Background()
			page, err := f.rec.Pages().Create(ctx, byPerson, records.PageInput{Title: records.Some("Deploy notes"),
				Body: records.Some("The token is " + value + ".")})
			if err != nil {
				t.Fatal(err)
			}
			f.srv.Script(
				enginetest.ToolCall("hub_read_page", map[string]any{"id": page.ID}),
				enginetest.Say("Read it."),
			)
			r, _, err := f.turn(t, wire, "what does the deploy page say? my token is "+value)
			if err != nil {
				t.Fatal(err)
			}
			reqs := f.srv.Requests()
			if len(reqs) != 2 {
				t.Fatalf("%d model requests, want 2", len(reqs))
			}
			for i, req := range reqs {
				b, _ := json.Marshal(req)
				if strings.Contains(string(b), value) {
					t.Errorf("model request %d holds the secret", i+1)
				}
			}
			if tr, _ := reqs[1].LastToolResult(); !strings.Contains(tr.Content, "[secret CANARY]") {
				t.Errorf("the page's text did not reach the model, hidden: %q", tr.Content)
			}
			for _, row := range r.Tools {
				if strings.Contains(row.Summary, value) {
					t.Errorf("tool row shows the secret: %q", row.Summary)
				}
			}
		})
	}
}
