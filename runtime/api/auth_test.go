package api

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/ensemblework/ensemble/runtime/events"
	"github.com/ensemblework/ensemble/runtime/ledger"
	"github.com/ensemblework/ensemble/runtime/records"
	"github.com/ensemblework/ensemble/runtime/store"
)

// noRedirect is a client that shows a redirect instead of following it.
var noRedirect = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

// browser is a signed-in browser session as a test holds it: its path and its cookie.
type browser struct {
	path   string // "/s/<id>"
	cookie *http.Cookie
}

// header is the Cookie header the browser sends under its path.
func (b browser) header() string { return b.cookie.Name + "=" + b.cookie.Value }

var signinFragment = regexp.MustCompile(`^/#signin=([A-Za-z0-9_-]+)$`)

// signIn signs a browser in through a one-time link's sign-in page, staying signed in or not.
func (f *fixture) signIn(t *testing.T, stay bool) browser {
	t.Helper()
	link := f.api.SigninURL(f.srv.URL)
	resp, err := noRedirect.Get(link)
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(page), `name="stay"`) || len(resp.Cookies()) != 0 {
		t.Fatalf("sign-in page: %d %s", resp.StatusCode, page)
	}
	form := url.Values{"code": {mustQuery(t, link, "code")}}
	if stay {
		form.Set("stay", "1")
	}
	req, _ := http.NewRequest("POST", f.srv.URL+"/auth/signin", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", f.srv.URL)
	resp, err = noRedirect.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return f.sessionFrom(t, resp, stay)
}

// sessionFrom reads the session a sign-in answered with, checking its cookie.
func (f *fixture) sessionFrom(t *testing.T, resp *http.Response, stay bool) browser {
	t.Helper()
	m := signinFragment.FindStringSubmatch(resp.Header.Get("Location"))
	if resp.StatusCode != http.StatusSeeOther || m == nil {
		t.Fatalf("sign-in: %d, Location %q", resp.StatusCode, resp.Header.Get("Location"))
	}
	ck := resp.Cookies()
	if len(ck) != 1 {
		t.Fatalf("sign-in set %d cookies", len(ck))
	}
	c := ck[0]
	if c.Name != sessionCookie(f.port(t)) || c.Path != "/s/"+m[1]+"/" || !c.HttpOnly || c.SameSite != http.SameSiteStrictMode {
		t.Errorf("cookie %+v: want %s, Path /s/%s/, HttpOnly, SameSite=Strict", c, sessionCookie(f.port(t)), m[1])
	}
	if stay != (c.MaxAge > 0) {
		t.Errorf("stay %v, cookie Max-Age %d", stay, c.MaxAge)
	}
	return browser{path: "/s/" + m[1], cookie: c}
}

func mustQuery(t *testing.T, link, key string) string {
	t.Helper()
	u, err := url.Parse(link)
	if err != nil {
		t.Fatal(err)
	}
	return u.Query().Get(key)
}

// port is the fixture's listening port.
func (f *fixture) port(t *testing.T) int {
	t.Helper()
	u, _ := url.Parse(f.srv.URL)
	p, err := strconv.Atoi(u.Port())
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// asBrowser sends a request as the browser would: under its path, with its cookie, no token.
func (f *fixture) asBrowser(t *testing.T, b browser, method, path, body string) (int, map[string]any) {
	t.Helper()
	return f.call(t, method, b.path+path, body, "Authorization", "", "Cookie", b.header())
}

// TestSigninCodeLifetime: a sign-in code works within five minutes of being made and not after,
// once only; the page asks before it signs in, and only the form's POST spends the code.
func TestSigninCodeLifetime(t *testing.T) {
	f := newFixture(t)
	base := time.Now()
	for _, tc := range []struct {
		age  time.Duration
		want int
	}{
		{0, http.StatusSeeOther},
		{4*time.Minute + 50*time.Second, http.StatusSeeOther},
		{5*time.Minute + time.Second, http.StatusUnauthorized},
		{time.Hour, http.StatusUnauthorized},
	} {
		f.api.now = func() time.Time { return base }
		link := f.api.SigninURL(f.srv.URL)
		f.api.now = func() time.Time { return base.Add(tc.age) }
		for range 2 { // the page can be shown again until the form is sent
			resp, err := noRedirect.Get(link)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if want := map[bool]int{true: 200, false: 401}[tc.want == http.StatusSeeOther]; resp.StatusCode != want {
				t.Errorf("the page of a code %v old: %d, want %d", tc.age, resp.StatusCode, want)
			}
		}
		post := func() *http.Response {
			req, _ := http.NewRequest("POST", f.srv.URL+"/auth/signin", strings.NewReader(url.Values{"code": {mustQuery(t, link, "code")}}.Encode()))
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			resp, err := noRedirect.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			return resp
		}
		if resp := post(); resp.StatusCode != tc.want {
			t.Errorf("a code %v old: %d, want %d", tc.age, resp.StatusCode, tc.want)
			continue
		}
		if tc.want != http.StatusSeeOther {
			continue
		}
		if resp := post(); resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("a code %v old worked twice", tc.age)
		}
	}
	// A code that was never made, and none.
	f.api.now = time.Now
	for _, link := range []string{f.srv.URL + "/auth/signin?code=" + strings.Repeat("A", 32), f.srv.URL + "/auth/signin"} {
		if resp, _ := noRedirect.Get(link); resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("%s: %d, want 401", link, resp.StatusCode)
		}
	}
	// A sign-in form from another site is refused before the code is looked at.
	link := f.api.SigninURL(f.srv.URL)
	req, _ := http.NewRequest("POST", f.srv.URL+"/auth/signin", strings.NewReader(url.Values{"code": {mustQuery(t, link, "code")}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", "http://127.0.0.1:1")
	if resp, _ := noRedirect.Do(req); resp.StatusCode != http.StatusForbidden {
		t.Errorf("a sign-in form from another port: %d, want 403", resp.StatusCode)
	}
}

// TestSessionCookieIsBoundToItsPathAndPort: the session cookie is named for the runtime's port and
// scoped to the session's own path; it is taken there and nowhere else (not on /api/…, not under
// another session's path), and only on the port it was made on: a cookie replayed to a runtime on
// another port over the same database is refused. The cookie's secret is not stored.
func TestSessionCookieIsBoundToItsPathAndPort(t *testing.T) {
	f := newFixture(t)
	b := f.signIn(t, true)
	if code, _ := f.asBrowser(t, b, "GET", "/api/tasks", ""); code != 200 {
		t.Fatalf("the browser under its path: %d", code)
	}
	other := f.signIn(t, false)
	for name, c := range map[string]struct{ path, cookie string }{
		"the cookie on /api":              {"/api/tasks", b.header()},
		"the cookie under another path":   {other.path + "/api/tasks", b.header()},
		"another port's cookie name":      {b.path + "/api/tasks", sessionCookie(f.port(t)+1) + "=" + b.cookie.Value},
		"a forged cookie under its path":  {b.path + "/api/tasks", b.cookie.Name + "=forged"},
		"its path without a cookie":       {b.path + "/api/tasks", ""},
		"a path that is not an API route": {b.path + "/index.html", b.header()},
		"a path with no id":               {"/s//api/tasks", b.header()},
		"the old cookie name, site-wide":  {"/api/tasks", "ensemble_session=" + b.cookie.Value},
	} {
		hdr := []string{"Authorization", ""}
		if c.cookie != "" {
			hdr = append(hdr, "Cookie", c.cookie)
		}
		if code, _ := f.call(t, "GET", c.path, "", hdr...); code != 401 && code != 404 {
			t.Errorf("%s: %d, want 401 or 404", name, code)
		}
	}
	var n int
	f.store.Reader().QueryRow("SELECT count(*) FROM browser_sessions WHERE hash = ? OR id = ?", b.cookie.Value, b.cookie.Value).Scan(&n)
	if n != 0 {
		t.Error("the cookie's secret is stored in the clear")
	}

	// The same database served on another port: the kept session is there, and refused.
	a2 := New(Options{Version: "test", Token: f.token, Keepalive: 50 * time.Millisecond}, slog.New(slog.DiscardHandler), f.store, f.bus, f.api.records)
	srv2 := httptest.NewServer(a2.Handler())
	defer srv2.Close()
	u2, _ := url.Parse(srv2.URL)
	req, _ := http.NewRequest("GET", srv2.URL+b.path+"/api/tasks", nil)
	req.Header.Set("Cookie", sessionCookie(mustAtoi(t, u2.Port()))+"="+b.cookie.Value)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 401 {
		t.Errorf("the session replayed to another port: %d, want 401", resp.StatusCode)
	}
}

func netListen(addr string) (net.Listener, error) { return net.Listen("tcp", addr) }

func mustAtoi(t *testing.T, s string) int {
	t.Helper()
	n, err := strconv.Atoi(s)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestSessionsEndOnRestartUnlessKept: a session the person chose to keep is in the database (its
// hash) and works for a runtime started again over it, on the same port; one not kept is held in
// memory only and ends with the runtime.
func TestSessionsEndOnRestartUnlessKept(t *testing.T) {
	dir := t.TempDir()
	st, err := store.Open(context.Background(), filepath.Join(dir, "ensemble.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	bus := events.NewBus()
	defer bus.Close()
	rec := records.New(st, ledger.New(st, bus))
	tok := NewLaunchToken()
	ui := fstest.MapFS{"index.html": {Data: []byte("<!doctype html><title>Ensemble</title>")}}
	serve := func() (*fixture, func()) {
		a := New(Options{Version: "test", Token: tok, UI: ui, Keepalive: 50 * time.Millisecond}, slog.New(slog.DiscardHandler), st, bus, rec)
		srv := httptest.NewUnstartedServer(a.Handler())
		return &fixture{srv: srv, api: a, store: st, bus: bus, token: tok}, srv.Close
	}
	first, stop := serve()
	first.srv.Start()
	kept, lost := first.signIn(t, true), first.signIn(t, false)
	for _, b := range []browser{kept, lost} {
		if code, _ := first.asBrowser(t, b, "GET", "/api/tasks", ""); code != 200 {
			t.Fatalf("before the restart: %d", code)
		}
	}
	var n int
	st.Reader().QueryRow("SELECT count(*) FROM browser_sessions").Scan(&n)
	if n != 1 {
		t.Errorf("%d sessions in the database, want only the kept one", n)
	}
	addr := first.srv.Listener.Addr().String()
	stop()

	// The runtime again, on the same port.
	again, stop := serve()
	defer stop()
	ln, err := netListen(addr)
	if err != nil {
		t.Skipf("the port was taken in between: %v", err)
	}
	again.srv.Listener.Close()
	again.srv.Listener = ln
	again.srv.Start()
	if code, _ := again.asBrowser(t, kept, "GET", "/api/tasks", ""); code != 200 {
		t.Errorf("the kept session after a restart: %d, want 200", code)
	}
	if code, _ := again.asBrowser(t, lost, "GET", "/api/tasks", ""); code != 401 {
		t.Errorf("the session not kept after a restart: %d, want 401", code)
	}
}

// TestSignOut: Sign out ends the session it comes with, kept or not, and tells the browser to drop
// the cookie; the session is refused after, the other sessions are not; without a session it is
// refused with a sentence.
func TestSignOut(t *testing.T) {
	f := newFixture(t)
	for _, stay := range []bool{true, false} {
		b, other := f.signIn(t, stay), f.signIn(t, stay)
		req, _ := http.NewRequest("POST", f.srv.URL+b.path+"/api/signout", nil)
		req.Header.Set("Cookie", b.header())
		req.Header.Set("Origin", f.srv.URL)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		ck := resp.Cookies()
		if resp.StatusCode != 200 || len(ck) != 1 || ck[0].Name != b.cookie.Name || ck[0].Path != b.cookie.Path || ck[0].MaxAge >= 0 {
			t.Errorf("stay %v: sign out %d, cookies %+v", stay, resp.StatusCode, ck)
		}
		if code, _ := f.asBrowser(t, b, "GET", "/api/tasks", ""); code != 401 {
			t.Errorf("stay %v: after sign out %d, want 401", stay, code)
		}
		if code, _ := f.asBrowser(t, other, "GET", "/api/tasks", ""); code != 200 {
			t.Errorf("stay %v: another session after sign out %d, want 200", stay, code)
		}
	}
	var n int
	f.store.Reader().QueryRow("SELECT count(*) FROM browser_sessions").Scan(&n)
	if n != 1 {
		t.Errorf("%d kept sessions left, want 1", n)
	}
	if code, out := f.call(t, "POST", "/api/signout", ""); code != 400 || !strings.Contains(out["error"].(string), "did not come with one") {
		t.Errorf("sign out with the launch token: %d %v", code, out)
	}
}

// TestDirectSigninSkipsThePage: the desktop window's link signs in at once, for this run only.
func TestDirectSigninSkipsThePage(t *testing.T) {
	f := newFixture(t)
	link := f.api.DirectSigninURL(f.srv.URL)
	resp, err := noRedirect.Get(link)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	b := f.sessionFrom(t, resp, false)
	if code, _ := f.asBrowser(t, b, "GET", "/api/tasks", ""); code != 200 {
		t.Errorf("the window's session: %d", code)
	}
	if resp, _ := noRedirect.Get(link); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("the window's link worked twice: %d", resp.StatusCode)
	}
}

// TestLaunchTokenComparesWhole: only the token itself passes, not a prefix, an extension, another
// case or an empty token; and an empty LaunchToken lets nothing in.
func TestLaunchTokenComparesWhole(t *testing.T) {
	tok := NewLaunchToken()
	v := tok.Reveal()
	if !tok.Equal(v) {
		t.Fatal("the token does not equal itself")
	}
	for _, s := range []string{"", v[:len(v)-1], v + "x", strings.ToUpper(v), " " + v} {
		if tok.Equal(s) {
			t.Errorf("Equal(%q) = true", s)
		}
	}
	if (LaunchToken{}).Equal("") {
		t.Error("an empty token equals an empty string")
	}
}
