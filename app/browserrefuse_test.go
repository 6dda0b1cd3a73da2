package app

import (
	"strings"
	"testing"
)

// The broker refuses Ensemble's own UI, under any loopback name, and the relay's addresses, with
// the sentence; other pages and other local ports are the decision order's.
func TestRefuseEnsemble(t *testing.T) {
	refuse := refuseEnsemble("127.0.0.1:48123", "relay.example.com:8443")
	for _, tc := range []struct {
		url     string
		refused bool
	}{
		{"http://127.0.0.1:48123/", true},
		{"http://localhost:48123/#/node", true},
		{"http://[::1]:48123/api/tasks", true},
		{"https://relay.example.com/", true},
		{"https://abc123.relay.example.com/#/node", true},
		{"http://127.0.0.1:3000/", false},
		{"https://example.com/", false},
		{"https://notrelay.example.com.evil.test/", false},
	} {
		why := refuse(tc.url)
		if (why != "") != tc.refused || tc.refused && !strings.Contains(why, "is Ensemble itself, not a website to open or sign in to. Use your Ensemble tools:") {
			t.Errorf("%s: %q", tc.url, why)
		}
	}
}
