package api

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/ensemblework/ensemble/runtime/secrets"
)

func TestSealedSecretRoute(t *testing.T) {
	f, sec := withSecrets(t, "http://127.0.0.1:1")
	ctx := context.Background()
	key := sec.SealKey()
	origin := f.srv.URL
	const value = "sk-sealed-value-never-in-clear-9876"
	box := func(name, decision, nonce string, allow ...string) secrets.Box {
		t.Helper()
		b, err := secrets.Seal(key.SPKI, secrets.AAD{Purpose: "secret", DeviceID: key.Kid, DecisionID: decision,
			Name: name, Origin: origin, ExpiresAt: time.Now().Add(10 * time.Minute).UTC().Format("2006-01-02T15:04:05.000Z"),
			Nonce: nonce}, secrets.Sealed{Value: value, Allow: allow})
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	body := func(b secrets.Box, decision string) string {
		raw, _ := json.Marshal(map[string]any{"sealed": b, "decisionId": decision})
		return string(raw)
	}
	put := func(name, body string) (int, map[string]any) {
		return f.call(t, "PUT", "/api/secrets/"+name+"/sealed", body, "Origin", origin)
	}

	good := box("STRIPE_API_KEY", "save-1", "bm9uY2Utb25lLXNpeHRlZW4tYnl0ZXM", "https://api.stripe.com")
	if status, out := put("STRIPE_API_KEY", body(good, "save-1")); status != 204 {
		t.Fatalf("put sealed: %d %v", status, out)
	}
	if v, err := sec.Get(ctx, "STRIPE_API_KEY"); err != nil || v != value {
		t.Fatalf("saved %q %v", v, err)
	}
	if list, _ := sec.List(ctx); len(list) != 1 || list[0].Allow[0] != "https://api.stripe.com" {
		t.Fatalf("listed %v", list)
	}
	// The same box again is refused.
	if status, out := put("STRIPE_API_KEY", body(good, "save-1")); status != 400 || out["code"] != "seal_replay" {
		t.Fatalf("replay: %d %v", status, out)
	}

	tampered := box("OTHER_KEY", "save-2", "bm9uY2UtdHdvLXNpeHRlZW4tYnl0ZXM")
	ct := []byte(tampered.CT)
	if ct[3] == 'A' {
		ct[3] = 'B'
	} else {
		ct[3] = 'A'
	}
	tampered.CT = string(ct)
	for _, tc := range []struct {
		name, path, body, code string
		headers                []string
	}{
		{"tampered", "OTHER_KEY", body(tampered, "save-2"), "seal_open", nil},
		{"other name", "THIRD_KEY", body(box("OTHER_KEY", "save-3", "bm9uY2UtdGhyZWUtc2l4dGVlbi1ieXRlcw"), "save-3"), "seal_name", nil},
		{"other decision", "OTHER_KEY", body(box("OTHER_KEY", "save-4", "bm9uY2UtZm91ci1zaXh0ZWVuLWJ5dGVzIQ"), "card-9"), "seal_decision", nil},
		{"plain value", "OTHER_KEY", `{"value":"` + value + `"}`, "seal_required", nil},
		{"no origin", "OTHER_KEY", body(box("OTHER_KEY", "save-5", "bm9uY2UtZml2ZS1zaXh0ZWVuLWJ5dGVzIQ"), "save-5"), "seal_origin", []string{"Origin", ""}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := append([]string{"Origin", origin}, tc.headers...)
			status, out := f.call(t, "PUT", "/api/secrets/"+tc.path+"/sealed", tc.body, h...)
			if msg, _ := out["error"].(string); status != 400 || out["code"] != tc.code || msg == "" || strings.Contains(msg, "\n") {
				t.Fatalf("got %d %v, want 400 %s", status, out, tc.code)
			}
			if list, _ := sec.List(ctx); len(list) != 1 {
				t.Fatalf("secrets now %v", list)
			}
		})
	}
	// No event holds the value.
	var n int
	f.store.Reader().QueryRow("SELECT count(*) FROM events WHERE data LIKE '%never-in-clear%'").Scan(&n)
	if n != 0 {
		t.Fatalf("%d events hold the value", n)
	}
}
