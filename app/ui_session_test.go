package app

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/storage"
	"github.com/chromedp/chromedp"
)

// otherServer is another program's web server on 127.0.0.1, as a page the person opens could be
// served from: it notes every cookie a request to it carries.
type otherServer struct {
	*httptest.Server
	mu      sync.Mutex
	cookies []string // "path: Cookie header"
	hits    int
}

func newOtherServer(t *testing.T) *otherServer {
	o := &otherServer{}
	o.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		o.mu.Lock()
		o.hits++
		if c := r.Header.Get("Cookie"); c != "" {
			o.cookies = append(o.cookies, r.URL.Path+": "+c)
		}
		o.mu.Unlock()
		if r.URL.Path != "/" {
			w.Write([]byte("{}"))
			return
		}
		// The page asks its own server for every path a session cookie could be scoped to that it
		// can think of, and the runtime's API with credentials (the runtime refuses another origin).
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, `<!doctype html><title>Another app</title><h1>Another app</h1><script>
			const paths = ['/', '/api/tasks', '/api/events', '/s/', '/s/x/api/tasks', '/auth/signin'];
			Promise.allSettled(paths.map((p) => fetch(p, {credentials: 'include'})))
				.then(() => { document.title = 'done'; });
		</script>`)
	}))
	t.Cleanup(o.Close)
	return o
}

func (o *otherServer) seen() (hits int, cookies []string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.hits, append([]string(nil), o.cookies...)
}

// TestSessionCookieNeverReachesAnotherPort signs a browser in through the sign-in page (staying
// signed in), then opens a page another program serves on another 127.0.0.1 port: neither that
// page's loading nor the requests it makes to its own server, under any path, carry the session
// cookie, which the browser holds for the runtime's session path only. The runtime's own board
// works, in a second tab too; Sign out in Settings ends the session, and the cookie with it.
func TestSessionCookieNeverReachesAnotherPort(t *testing.T) {
	needUI(t)
	rt := startTestRuntime(t)
	other := newOtherServer(t)
	if strings.Split(other.URL, ":")[1] != strings.Split(rt.URL, ":")[1] {
		t.Fatalf("the two servers are not on one host: %s, %s", other.URL, rt.URL)
	}
	browser := newBrowser(t)
	ctx, cancel := context.WithTimeout(browser, 90*time.Second)
	defer cancel()

	// The sign-in page asks whether to stay signed in.
	if err := chromedp.Do(ctx, chromedp.Navigate(rt.SigninPageURL()), chromedp.WaitVisible(chromedp.CSS(`#signin`))); err != nil {
		t.Fatalf("sign-in page: %v", err)
	}
	screenshot(t, ctx, "signin-page-390.png", 390)
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`#stay`)), chromedp.Click(chromedp.CSS(`#signin`)),
		chromedp.WaitVisible(chromedp.CSS(`#live[data-state="live"]`))); err != nil {
		t.Fatalf("sign in: %v", err)
	}
	if href, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`location.href`)); href != rt.URL+"/#/" {
		t.Errorf("after sign-in the page is at %q, want the board without the session's id", href)
	}
	// The browser holds the cookie, for the session's path only, until long after this browser closes.
	sent, err := chromedp.Run(ctx, func(ctx context.Context, tg *chromedp.Target) (network.GetCookiesResult, error) {
		return cdp.Call(ctx, tg, network.GetCookies, network.GetCookiesParams{URLs: []string{rt.URL + "/", rt.URL + "/api/tasks"}})
	})
	if err != nil {
		t.Fatal(err)
	}
	cookies := sent.Cookies
	session := sessionCookieIn(t, ctx, rt.URL)
	if session == nil {
		t.Fatalf("the browser holds no session cookie for the runtime (cookies at /: %v)", cookies)
	}
	if !strings.HasPrefix(session.Path, "/s/") || !session.HTTPOnly || session.Session {
		t.Errorf("session cookie %+v: want HttpOnly, kept (Stay signed in), under /s/<id>/", session)
	}
	if len(cookies) != 0 {
		t.Errorf("cookies sent with every request to the runtime's host: %+v", cookies)
	}

	if _, err := chromedp.Run(ctx, func(ctx context.Context, tg *chromedp.Target) (cdp.Empty, error) {
		return cdp.Call(ctx, tg, network.SetCookie, network.SetCookieParams{Name: "control", Value: "site-wide", URL: rt.URL + "/", Path: "/"})
	}); err != nil {
		t.Fatal(err)
	}

	// Another program's page on another port, in this browser: its page, its own requests and the
	// paths it navigates to.
	tab, cancelTab := chromedp.NewContext(browser)
	defer cancelTab()
	tctx, cancelT := context.WithTimeout(tab, 60*time.Second)
	defer cancelT()
	if err := chromedp.Do(tctx, chromedp.Navigate(other.URL+"/")); err != nil {
		t.Fatal(err)
	}
	waitFor(t, tctx, "the other page's requests", `document.title === 'done'`)
	// Every path it could guess: the session's own is 128 random bits only the runtime's page holds
	// (in its origin's storage, which is per port). Were it known, the cookie would go there too, on
	// any port, as the control cookie below does everywhere: the path is what keeps it home.
	for _, p := range []string{"/api/tasks", "/api/events", "/s/", "/s/AAAAAAAAAAAAAAAAAAAAAA/api/tasks", "/auth/signin"} {
		if err := chromedp.Do(tctx, chromedp.Navigate(other.URL+p)); err != nil {
			t.Fatalf("%s: %v", p, err)
		}
	}
	hits, got := other.seen()
	if hits < 10 {
		t.Fatalf("the other server saw %d requests; the check above saw nothing", hits)
	}
	for _, c := range got {
		if strings.Contains(c, session.Value) || strings.Contains(c, "ensemble_session") {
			t.Errorf("another port's server got the session cookie: %s", c)
		}
	}
	// The check's own control: a cookie the runtime's host holds for every path does reach the other
	// port (cookies are not kept apart by port), so the session cookie is kept away by its path.
	if !strings.Contains(strings.Join(got, "\n"), "control=site-wide") {
		t.Errorf("the control cookie did not reach the other port's server either; the check proves nothing: %v", got)
	}

	// The runtime's own pages work, in a second tab too, and a task lands through the session.
	second, cancel2 := chromedp.NewContext(browser)
	defer cancel2()
	ctx2, cancel3 := context.WithTimeout(second, 60*time.Second)
	defer cancel3()
	if err := chromedp.Do(ctx2, chromedp.Navigate(rt.URL+"/"), chromedp.WaitVisible(chromedp.CSS(`#live[data-state="live"]`)),
		chromedp.SendKeys(chromedp.CSS("#quick-add"), "Water the ferns\n"),
		chromedp.WaitVisible(chromedp.CSS(`[data-status="todo"] [data-task-id]`))); err != nil {
		t.Fatalf("second tab: %v", err)
	}

	// Settings → This browser → Sign out.
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`(location.hash = '#/settings', true)`)); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "Settings with Sign out", `!!document.querySelector('#sign-out')`)
	screenshot(t, ctx, "settings-signout-1280.png", 1280)
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`#sign-out`))); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "the signed-out page", `document.querySelector('#signed-out-heading')?.textContent === 'Signed out'`)
	// It names the command that makes a new link, as this binary is run here (the test binary
	// is on no PATH, so its path).
	waitFor(t, ctx, "the signed-out page naming the open command", fmt.Sprintf(`document.querySelector('#signed-out-sentence code')?.textContent === %q`, selfCommand()+" open"))
	screenshot(t, ctx, "signed-out-390.png", 390)
	if c := sessionCookieIn(t, ctx, rt.URL); c != nil {
		t.Errorf("the browser still holds the session cookie after Sign out: %+v", c)
	}
	// The cookie's value, replayed, is refused.
	req, _ := http.NewRequest("GET", rt.URL+strings.TrimSuffix(session.Path, "/")+"/api/tasks", nil)
	req.Header.Set("Cookie", session.Name+"="+session.Value)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 401 {
		t.Errorf("the session after Sign out: %d, want 401", resp.StatusCode)
	}
	// The second tab finds itself signed out at its next request.
	if _, err := chromedp.Run(ctx2, chromedp.Reload()); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx2, "the second tab signed out", `document.querySelector('#signed-out-heading')?.textContent === 'Not signed in'`)
	waitFor(t, ctx2, "the second tab naming the open command", fmt.Sprintf(`document.querySelector('#signed-out-sentence')?.textContent.includes(%q)`, selfCommand()+" open"))
}

// sessionCookieIn is the runtime's session cookie the browser holds, or nil.
func sessionCookieIn(t *testing.T, ctx context.Context, base string) *network.Cookie {
	t.Helper()
	all, err := chromedp.Run(ctx, func(ctx context.Context, tg *chromedp.Target) (storage.GetCookiesResult, error) {
		return cdp.Call(ctx, tg, storage.GetCookies, storage.GetCookiesParams{})
	})
	if err != nil {
		t.Fatal(err)
	}
	host := strings.Split(strings.TrimPrefix(base, "http://"), ":")[0]
	for _, c := range all.Cookies {
		if c.Domain == host && strings.HasPrefix(c.Name, "ensemble_session_") {
			return c
		}
	}
	return nil
}

// TestStaySignedInAcrossARestoreAndReset: a browser that chose to stay signed in is still signed in
// after the runtime restarts on its port, one that did not is signed out; and when the data folder
// was restored from a backup in between, the open board is told to reset (it had seen events the
// restored log does not hold) and reads its lists again, without a reload: the task made after the
// backup is gone from it.
func TestStaySignedInAcrossARestoreAndReset(t *testing.T) {
	needUI(t)
	dir := t.TempDir()
	var logs lockedBuffer
	start := func(addr string) *Runtime {
		rt, err := startRuntime(context.Background(), runtimeConfig{DataDir: dir, Addr: addr,
			Log: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelInfo}))})
		if err != nil {
			t.Fatal(err)
		}
		return rt
	}
	rt := start("127.0.0.1:0")
	addr := rt.ln.Addr().String()
	closed := false
	defer func() {
		if !closed {
			rt.Close()
		}
	}()
	c := &client{f: apiFile{URL: rt.URL, Token: readToken(t, rt)}, http: httpClient()}
	bg := context.Background()
	if err := c.do(bg, "POST", "/api/tasks", map[string]any{"title": "Before the backup"}, nil); err != nil {
		t.Fatal(err)
	}

	kept, lost := newBrowser(t), newBrowser(t) // two browsers: one stays signed in, one does not
	ctx, cancel := context.WithTimeout(kept, 120*time.Second)
	defer cancel()
	ctxLost, cancelLost := context.WithTimeout(lost, 120*time.Second)
	defer cancelLost()
	for _, b := range []struct {
		ctx  context.Context
		stay bool
	}{{ctx, true}, {ctxLost, false}} {
		acts := []chromedp.Action[chromedp.Void]{chromedp.Navigate(rt.SigninPageURL()), chromedp.WaitVisible(chromedp.CSS(`#signin`))}
		if b.stay {
			acts = append(acts, chromedp.Click(chromedp.CSS(`#stay`)))
		}
		acts = append(acts, chromedp.Click(chromedp.CSS(`#signin`)), chromedp.WaitVisible(chromedp.CSS(`#live[data-state="live"]`)))
		if err := chromedp.Do(b.ctx, acts...); err != nil {
			t.Fatalf("sign in (stay %v): %v", b.stay, err)
		}
	}
	backup := filepath.Join(t.TempDir(), "copy.db")
	if err := rt.store.Backup(bg, backup); err != nil {
		t.Fatal(err)
	}
	if err := c.do(bg, "POST", "/api/tasks", map[string]any{"title": "After the backup"}, nil); err != nil {
		t.Fatal(err)
	}
	card := `[...document.querySelectorAll('[data-task-id] .card-title')].map((e) => e.textContent.trim())`
	waitFor(t, ctx, "the task made after the backup, live", card+`.includes('After the backup')`)
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`window.notReloaded = true`)); err != nil {
		t.Fatal(err)
	}

	// Stop, restore the backup, start again on the same port.
	rt.Close()
	closed = true
	db := dbPath(dir)
	for _, f := range []string{db + "-wal", db + "-shm"} {
		os.Remove(f)
	}
	b, err := os.ReadFile(backup)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(db, b, 0o600); err != nil {
		t.Fatal(err)
	}
	if ln, err := net.Listen("tcp", addr); err != nil {
		t.Skipf("port %s was taken while the runtime was stopped: %v", addr, err)
	} else {
		ln.Close()
	}
	rt = start(addr)
	closed = false
	if rt.ln.Addr().String() != addr {
		t.Skipf("the runtime came back on %s, not %s", rt.ln.Addr(), addr)
	}

	waitFor(t, ctx, "the board reading its lists again after the reset", `!`+card+`.includes('After the backup') && `+card+`.includes('Before the backup') && document.querySelector('#live')?.dataset.state === 'live'`)
	if ok, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`window.notReloaded === true`)); err != nil || !ok {
		t.Errorf("the page was reloaded (%v); the reset should reread its lists in place", err)
	}
	if !strings.Contains(logs.String(), "told to reset") {
		t.Errorf("the stream did not reset the client; the log:\n%s", logs.String())
	}
	screenshot(t, ctx, "board-after-reset-1280.png", 1280)
	// Still signed in: a task added in the page lands.
	if err := chromedp.Do(ctx, chromedp.SendKeys(chromedp.CSS("#quick-add"), "After the restore\n")); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "a task added after the restart", card+`.includes('After the restore')`)

	// The browser that did not stay signed in is signed out at its next request.
	if _, err := chromedp.Run(ctxLost, chromedp.Reload()); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctxLost, "the browser that did not stay, signed out", `document.querySelector('#signed-out-heading')?.textContent === 'Not signed in'`)
}
