package api

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/ensemblework/ensemble/runtime/events"
	"github.com/ensemblework/ensemble/runtime/ledger"
	"github.com/ensemblework/ensemble/runtime/records"
	"github.com/ensemblework/ensemble/runtime/store"
)

const testRelayHost = "abcdefghijklmnopqrstuvwxyz.relay.test"

// relayFixture serves the API over TLS and sends requests addressed to the runtime's relay name, as
// they arrive through the relay's tunnel.
type relayFixture struct {
	*fixture
	tls   *httptest.Server
	plain *httptest.Server
	now   time.Time
}

func newRelayFixture(t *testing.T, relay string) *relayFixture {
	t.Helper()
	return newRelayFixtureWith(t, relay, nil)
}

// newRelayFixtureWith is newRelayFixture with the Server changed by mod before it serves.
func newRelayFixtureWith(t *testing.T, relay string, mod func(*Server)) *relayFixture {
	t.Helper()
	st, err := store.Open(context.Background(), filepath.Join(t.TempDir(), "ensemble.db"))
	if err != nil {
		t.Fatal(err)
	}
	bus := events.NewBus()
	rec := records.New(st, ledger.New(st, bus))
	tok := NewLaunchToken()
	ui := fstest.MapFS{"index.html": {Data: []byte("<!doctype html><title>Ensemble</title>")}}
	a := New(Options{Version: "test", Token: tok, UI: ui, Keepalive: 50 * time.Millisecond, Relay: relay},
		slog.New(slog.NewTextHandler(io.Discard, nil)), st, bus, rec)
	f := &relayFixture{now: time.Now()}
	a.now = func() time.Time { return f.now }
	if mod != nil {
		mod(a)
	}
	// The phone path's server, as the app serves it on the tunnel's listener.
	f.tls = httptest.NewUnstartedServer(nil)
	f.tls.Config = a.PhoneServer(a.Handler(), nil)
	f.tls.StartTLS()
	f.plain = httptest.NewServer(a.Handler())
	t.Cleanup(func() {
		bus.Close()
		f.tls.Close()
		f.plain.Close()
		st.Close()
	})
	f.fixture = &fixture{srv: f.plain, api: a, store: st, bus: bus, token: tok}
	return f
}

// phone sends a request to the relay name with the given headers (name, value pairs) and cookie.
func (f *relayFixture) phone(t *testing.T, method, path, body, cookie string, headers ...string) *http.Response {
	t.Helper()
	req, _ := http.NewRequest(method, f.tls.URL+path, strings.NewReader(body))
	req.Host = testRelayHost
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if cookie != "" {
		req.AddCookie(&http.Cookie{Name: deviceCookie, Value: cookie})
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	c := f.tls.Client()
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

const origin = "https://" + testRelayHost

func (f *relayFixture) link(t *testing.T) string {
	t.Helper()
	code, out := f.call(t, "POST", "/api/pair/links", "")
	if code != http.StatusCreated {
		t.Fatalf("POST /api/pair/links: %d %v", code, out)
	}
	u := out["url"].(string)
	secret, ok := strings.CutPrefix(u, origin+"/pair#s=")
	if !ok || len(secret) < 22 {
		t.Fatalf("link %q does not carry the secret in the fragment of the relay origin", u)
	}
	return secret
}

// pair pairs a phone and returns its device token.
func (f *relayFixture) pair(t *testing.T) string {
	t.Helper()
	resp := f.phone(t, "POST", "/api/pair", `{"secret":"`+f.link(t)+`"}`, "", "Origin", origin)
	if resp.StatusCode != http.StatusCreated {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("pair: %d %s", resp.StatusCode, b)
	}
	for _, c := range resp.Cookies() {
		if c.Name == deviceCookie {
			if !c.HttpOnly || !c.Secure || c.SameSite != http.SameSiteStrictMode || c.Path != "/" || c.Domain != "" {
				t.Fatalf("cookie %+v is not __Host-, HttpOnly, Secure, SameSite=Strict", c)
			}
			return c.Value
		}
	}
	t.Fatal("no device cookie")
	return ""
}

func TestPairLinkNeedsRelay(t *testing.T) {
	f := newRelayFixture(t, "")
	if code, out := f.call(t, "POST", "/api/pair/links", ""); code != http.StatusConflict {
		t.Fatalf("got %d %v, want 409", code, out)
	}
}

func TestPairAndUse(t *testing.T) {
	f := newRelayFixture(t, testRelayHost)
	tok := f.pair(t)

	resp := f.phone(t, "GET", "/api/tasks", "", tok)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /api/tasks as the phone: %d", resp.StatusCode)
	}
	if h := resp.Header.Get("Strict-Transport-Security"); !strings.Contains(h, "max-age=") {
		t.Fatalf("no HSTS on the relay name: %q", h)
	}
	if f.phone(t, "GET", "/api/tasks", "", "not-a-token").StatusCode != http.StatusUnauthorized {
		t.Fatal("a made-up token was let in")
	}
	// Only the hash is kept.
	var hash string
	f.store.Reader().QueryRow("SELECT hash FROM paired_devices").Scan(&hash)
	if hash != hashText(tok) {
		t.Fatalf("stored %q, want the token's hash", hash)
	}
	// The page the link opens loads its script from the runtime, under a CSP.
	page := f.phone(t, "GET", "/pair", "", "")
	if csp := page.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "script-src 'self'") || page.StatusCode != 200 {
		t.Fatalf("pair page: %d, CSP %q", page.StatusCode, csp)
	}
	if js := f.phone(t, "GET", "/pair.js", "", ""); js.StatusCode != 200 {
		t.Fatalf("pair.js: %d", js.StatusCode)
	}

	// Listed, then revoked: the next request is 401.
	code, out := f.call(t, "GET", "/api/pair/devices", "")
	devs, _ := out["devices"].([]any)
	if code != 200 || len(devs) != 1 {
		t.Fatalf("list: %d %v", code, out)
	}
	id := devs[0].(map[string]any)["id"].(string)
	if code, out := f.call(t, "DELETE", "/api/pair/devices/"+id, ""); code != http.StatusNoContent {
		t.Fatalf("revoke: %d %v", code, out)
	}
	if f.phone(t, "GET", "/api/tasks", "", tok).StatusCode != http.StatusUnauthorized {
		t.Fatal("a revoked phone was let in")
	}
	if code, _ := f.call(t, "DELETE", "/api/pair/devices/"+id, ""); code != http.StatusNotFound {
		t.Fatalf("revoking twice: %d", code)
	}
}

func TestPairSecretRefused(t *testing.T) {
	f := newRelayFixture(t, testRelayHost)
	post := func(secret string, headers ...string) int {
		return f.phone(t, "POST", "/api/pair", `{"secret":"`+secret+`"}`, "", headers...).StatusCode
	}
	s := f.link(t)
	if code := post(s, "Origin", origin); code != http.StatusCreated {
		t.Fatalf("first use: %d", code)
	}
	if code := post(s, "Origin", origin); code != http.StatusUnauthorized {
		t.Fatalf("replayed secret: %d, want 401", code)
	}
	expired := f.link(t)
	f.now = f.now.Add(pairSecretLife + time.Second)
	if code := post(expired, "Origin", origin); code != http.StatusUnauthorized {
		t.Fatalf("expired secret: %d, want 401", code)
	}
	s = f.link(t)
	for _, h := range [][]string{
		{"Origin", "https://zzzzzzzzzzzzzzzzzzzzzzzzzz.relay.test"}, // a neighbour on the relay
		{"Origin", "http://" + testRelayHost},
		{},
	} {
		if code := post(s, h...); code != http.StatusForbidden {
			t.Errorf("Origin %v: %d, want 403", h, code)
		}
	}
	// Over plain HTTP (not through the relay's TLS) the relay name is refused.
	req, _ := http.NewRequest("POST", f.plain.URL+"/api/pair", strings.NewReader(`{"secret":"`+s+`"}`))
	req.Host = testRelayHost
	req.Header.Set("Origin", "http://"+testRelayHost)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Fatalf("plain HTTP: %d, want 403", resp.StatusCode)
	}
	// The refusals above did not spend s.
	if code := post(s, "Origin", origin); code != http.StatusCreated {
		t.Fatalf("the good secret after refusals: %d", code)
	}
	// Guessing is cut off.
	for range pairFailLimit {
		post("guess", "Origin", origin)
	}
	if code := post(f.link(t), "Origin", origin); code != http.StatusTooManyRequests {
		t.Fatalf("after %d guesses: %d, want 429", pairFailLimit, code)
	}
}

func TestRelayOriginChecks(t *testing.T) {
	f := newRelayFixture(t, testRelayHost)
	tok := f.pair(t)
	neighbour := "https://zzzzzzzzzzzzzzzzzzzzzzzzzz.relay.test"
	tests := []struct {
		name    string
		method  string
		path    string
		body    string
		headers []string
		want    int
	}{
		{"write, exact origin", "POST", "/api/tasks", `{"title":"from the phone"}`, []string{"Origin", origin}, http.StatusCreated},
		{"write, no origin", "POST", "/api/tasks", `{"title":"x"}`, nil, http.StatusForbidden},
		{"write, neighbour", "POST", "/api/tasks", `{"title":"x"}`, []string{"Origin", neighbour}, http.StatusForbidden},
		{"read, no origin", "GET", "/api/tasks", "", nil, http.StatusOK},
		{"read, neighbour", "GET", "/api/tasks", "", []string{"Origin", neighbour}, http.StatusForbidden},
		{"stream, no origin, no fetch metadata", "GET", "/api/events", "", nil, http.StatusForbidden},
		{"stream, neighbour", "GET", "/api/events", "", []string{"Origin", neighbour, "Sec-Fetch-Site", "same-site"}, http.StatusForbidden},
		{"upgrade, no origin", "GET", "/api/terminal", "", []string{"Upgrade", "websocket", "Connection", "Upgrade"}, http.StatusForbidden},
		{"upgrade, neighbour", "GET", "/api/terminal", "", []string{"Upgrade", "websocket", "Connection", "Upgrade", "Origin", neighbour}, http.StatusForbidden},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp := f.phone(t, tt.method, tt.path, tt.body, tok, tt.headers...)
			if resp.StatusCode != tt.want {
				b, _ := io.ReadAll(resp.Body)
				t.Fatalf("got %d %s, want %d", resp.StatusCode, b, tt.want)
			}
		})
	}
	// A same-origin EventSource (no Origin, Sec-Fetch-Site: same-origin) streams.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", f.tls.URL+"/api/events", nil)
	req.Host = testRelayHost
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Sec-Fetch-Site", "same-origin")
	req.AddCookie(&http.Cookie{Name: deviceCookie, Value: tok})
	resp, err := f.tls.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		t.Fatalf("same-origin stream: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
}
