package jobs

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ensemblework/ensemble/browser"
)

// loginSite has a sign-in form whose fields sit at fixed places of a 1280×800 page, and a home
// page that greets whoever has the session its form sets.
func loginSite(t *testing.T) *httptest.Server {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /login", func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, `<!doctype html><html><head><title>Sign in</title><style>input{position:absolute;left:100px;width:300px;height:40px}</style></head><body>
<form method="post" action="/login"><input name="user" style="top:100px" aria-label="User"><input name="pass" type="password" style="top:200px" aria-label="Password"><button style="position:absolute;top:300px;left:100px">Sign in</button></form></body></html>`)
	})
	mux.HandleFunc("POST /login", func(w http.ResponseWriter, r *http.Request) {
		if r.FormValue("user") == "alice" && r.FormValue("pass") == "s3cret" {
			http.SetCookie(w, &http.Cookie{Name: "session", Value: "alice-session", Path: "/"})
		}
		http.Redirect(w, r, "/home", http.StatusSeeOther)
	})
	mux.HandleFunc("GET /home", func(w http.ResponseWriter, r *http.Request) {
		if c, err := r.Cookie("session"); err != nil || c.Value != "alice-session" {
			http.Redirect(w, r, "/login", http.StatusSeeOther)
			return
		}
		io.WriteString(w, `<!doctype html><html><head><title>Home</title></head><body><h1>Welcome back, alice</h1></body></html>`)
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

// A run's sign-in against real Chromium: browser_login_needed holds the tab (nothing reads it)
// and asks the person on Needs me; the person signs in on the tab and the broker sees it done, so
// the call that waited goes on signed in with nobody pressing anything. Not now clears the tab;
// "I signed in" when the page still asks is asked again, then given up.
func TestRunSignIn(t *testing.T) {
	if testing.Short() {
		t.Skip("starts Chromium")
	}
	site := loginSite(t)
	var svc atomic.Pointer[Service]
	b := realBroker(t, func(w browser.Work, tab string, ok bool, how string) {
		if s := svc.Load(); s != nil {
			s.OnSignIn(w, tab, ok, how)
		}
	})
	e, j, sess := runClient(t, nil, func(o *Options) { o.Browser = b })
	svc.Store(e.svc)
	w := browser.Work("run:" + j.ID)
	tabOf := func(text string) string {
		t.Helper()
		m := regexp.MustCompile(`Tab (t\d+)`).FindStringSubmatch(text)
		if m == nil {
			t.Fatalf("no tab in %q", text)
		}
		return m[1]
	}
	asked := func(n int) {
		t.Helper()
		deadline := time.Now().Add(20 * time.Second)
		for e.asker.count() < n {
			if time.Now().After(deadline) {
				t.Fatalf("the person was asked %d times, want %d", e.asker.count(), n)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}

	// Seen done: the question waits; the person signs in on the tab.
	waiting := make(chan struct{})
	t.Cleanup(func() { close(waiting) }) // a failed test's waiting call ends before its session closes
	e.asker.mu.Lock()
	e.asker.hold = waiting
	e.asker.mu.Unlock()
	open, _ := callText(t, sess, "browser_open", map[string]any{"url": site.URL + "/login"})
	tab := tabOf(open)
	type result struct {
		text  string
		isErr bool
	}
	got := make(chan result, 1)
	go func() {
		text, isErr := callText(t, sess, "browser_login_needed", map[string]any{"tab": tab, "reason": "to read the account"})
		got <- result{text, isErr}
	}()
	asked(1)
	if q := e.asker.asked[0]; !strings.Contains(q.Text, "needs you to sign in to 127.0.0.1 for this run") || strings.Join(q.Options, "|") != "I signed in|Not now" {
		t.Fatalf("the question: %+v", q)
	}
	if text, isErr := callText(t, sess, "browser_snapshot", map[string]any{"tab": tab}); !isErr || !strings.Contains(text, "waits for the person") {
		t.Fatalf("a held tab was read: %q", text)
	}
	for _, in := range []browser.Input{
		{Kind: "tap", X: 250.0 / 1280, Y: 120.0 / 800}, {Kind: "text", Text: "alice"},
		{Kind: "tap", X: 250.0 / 1280, Y: 220.0 / 800}, {Kind: "text", Text: "s3cret"}, {Kind: "key", Key: "Enter"},
	} {
		if err := b.Input(context.Background(), w, tab, in); err != nil {
			t.Fatalf("the person's %s: %v", in.Kind, err)
		}
	}
	select {
	case r := <-got:
		if r.isErr || !strings.Contains(r.text, "The person did it") || !strings.Contains(r.text, "Home") {
			t.Fatalf("after the sign-in: %q %v", r.text, r.isErr)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the sign-in was not seen done")
	}
	if snap, isErr := callText(t, sess, "browser_snapshot", map[string]any{"tab": tab}); isErr || !strings.Contains(snap, "Welcome back, alice") {
		t.Fatalf("the tab after the sign-in: %q", snap)
	}

	// Not now: the tab is cleared and given back.
	e.asker.mu.Lock()
	e.asker.hold, e.asker.reply = nil, Reply{Option: notNowOption, Text: "Not now"}
	e.asker.mu.Unlock()
	open, _ = callText(t, sess, "browser_open", map[string]any{"url": site.URL + "/login", "private": true})
	tab2 := tabOf(open)
	if text, isErr := callText(t, sess, "browser_login_needed", map[string]any{"tab": tab2}); !isErr || !strings.Contains(text, "chose not to sign in") {
		t.Fatalf("not now: %q %v", text, isErr)
	}
	for _, ti := range b.Tabs(w) {
		if ti.ID == tab2 && (ti.Sensitive != "" || ti.URL != "about:blank") {
			t.Fatalf("after not now the tab is %+v", ti)
		}
	}

	// "I signed in" while the page still asks: checked, asked again, then given up.
	e.asker.mu.Lock()
	e.asker.reply = Reply{Option: signedInOption, Text: "I signed in"}
	before := len(e.asker.asked)
	e.asker.mu.Unlock()
	open, _ = callText(t, sess, "browser_open", map[string]any{"url": site.URL + "/login", "private": true})
	if text, isErr := callText(t, sess, "browser_login_needed", map[string]any{"tab": tabOf(open)}); !isErr || !strings.Contains(text, "3 times") {
		t.Fatalf("never signed in: %q %v", text, isErr)
	}
	if n := e.asker.count() - before; n != signInTries {
		t.Fatalf("asked %d times, want %d", n, signInTries)
	}
}
