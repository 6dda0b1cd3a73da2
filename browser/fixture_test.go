package browser

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"sync"
	"testing"
	"time"
)

// needChromium skips without Chromium, except on CI where a missing one fails.
func needChromium(t testing.TB) {
	t.Helper()
	if _, err := os.Stat("/usr/bin/chromium"); err == nil {
		return
	}
	if _, err := exec.LookPath("chromium"); err == nil {
		return
	}
	if os.Getenv("CI") == "true" {
		t.Fatal("Chromium is missing on CI: install it (apt install chromium)")
	}
	t.Skip("no Chromium on this computer (/usr/bin/chromium): install it to run the broker's tests")
}

// clock is a test clock the lease tests move.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time      { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) add(d time.Duration) { c.mu.Lock(); c.t = c.t.Add(d); c.mu.Unlock() }

// site is the test web site: pages for each behaviour the broker has.
type site struct {
	*httptest.Server
	mu       sync.Mutex
	sessions []string // session cookies /home saw
}

func (s *site) sawSession(v string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, x := range s.sessions {
		if x == v {
			return true
		}
	}
	return false
}

const pageHead = `<!doctype html><html><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1"><title>%s</title>
<style>body{font-family:sans-serif;margin:24px} .card{border:1px solid #ccc;border-radius:8px;padding:16px;margin:12px 0;background:#f6f8ff}</style></head><body>`

func newSite(t testing.TB, other string) *site {
	s := &site{}
	mux := http.NewServeMux()
	html := func(w http.ResponseWriter, title, body string) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, pageHead+"%s</body></html>", title, body)
	}
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/" {
			http.NotFound(w, r)
			return
		}
		html(w, "Home", `<h1>Test shop</h1><div class="card"><p id="msg">Nothing yet</p>
<button onclick="document.getElementById('msg').textContent='Saved!'">Save</button>
<a href="/docs">Docs</a></div>
<form action="/search" method="get" class="card"><label>Query <input name="q" id="q" value="old"></label></form>
<button onclick="window.open('/child','_blank')">Open window</button>
<a href="/child" target="_blank">New tab link</a>`)
	})
	mux.HandleFunc("/docs", func(w http.ResponseWriter, r *http.Request) { html(w, "Docs", `<h2>Docs page</h2><p>Read me</p>`) })
	mux.HandleFunc("/child", func(w http.ResponseWriter, r *http.Request) {
		html(w, "Child window", `<h1>Popup</h1><button>Pay</button>`)
	})
	mux.HandleFunc("/search", func(w http.ResponseWriter, r *http.Request) {
		html(w, "Results", `<h1>Results for `+template(r.URL.Query().Get("q"))+`</h1>`)
	})
	mux.HandleFunc("/agent", func(w http.ResponseWriter, r *http.Request) {
		html(w, "Agent", `<p id="wd"></p><script>document.getElementById('wd').textContent=JSON.stringify({wd: navigator.webdriver, ua: navigator.userAgent, lang: navigator.language, tz: Intl.DateTimeFormat().resolvedOptions().timeZone})</script>`)
	})
	mux.HandleFunc("/errors", func(w http.ResponseWriter, r *http.Request) {
		html(w, "Errors", `<p>errors</p><img src="/missing.png"><script>console.error("boom from page"); setTimeout(()=>{throw new Error("uncaught kaboom")},0)</script>`)
	})
	mux.HandleFunc("/offline", func(w http.ResponseWriter, r *http.Request) {
		html(w, "Offline", `<p>local page</p><img src="http://203.0.113.1/pixel.png">`)
	})
	mux.HandleFunc("/to-other", func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, other+"/", http.StatusFound) })
	mux.HandleFunc("/table", func(w http.ResponseWriter, r *http.Request) {
		html(w, "Prices", `<h1>Prices</h1><table><thead><tr><th>Item</th><th>Price</th></tr></thead><tbody><tr><td>Widget</td><td>$19.99</td></tr><tr><td>Gadget</td><td>$5.00</td></tr></tbody></table>`)
	})
	mux.HandleFunc("/report.csv", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/csv")
		w.Header().Set("Content-Disposition", `attachment; filename="report.csv"`)
		fmt.Fprint(w, "a,b\n1,2\n")
	})
	mux.HandleFunc("/download", func(w http.ResponseWriter, r *http.Request) {
		html(w, "Download", `<a href="/report.csv">Get the report</a>`)
	})
	mux.HandleFunc("/password", func(w http.ResponseWriter, r *http.Request) {
		html(w, "Account", `<h1>Account</h1><div class="card"><label>Email <input id="e" value="alice@example.com"></label><br><br>
<label>Password <input type="password" id="p" value="hunter2hunter2"></label></div>`)
	})
	mux.HandleFunc("/login", s.login)
	mux.HandleFunc("/home", func(w http.ResponseWriter, r *http.Request) {
		c, err := r.Cookie("session")
		if err != nil {
			http.Redirect(w, r, "/login", http.StatusFound)
			return
		}
		s.mu.Lock()
		s.sessions = append(s.sessions, c.Value)
		s.mu.Unlock()
		// Only the page right after the sign-in keeps a setting in local storage: a tab that
		// has it without passing here got it moved from the clean browser.
		script := ""
		if r.URL.Query().Get("fresh") == "1" {
			script = `<script>localStorage.setItem('prefs', 'dark')</script>`
		}
		html(w, "Welcome", `<h1>Welcome back</h1><p>Signed in.</p>`+script)
	})
	mux.HandleFunc("/many", func(w http.ResponseWriter, r *http.Request) { html(w, "Many", manyElements(1000)) })
	s.Server = httptest.NewServer(mux)
	t.Cleanup(s.Close)
	return s
}

// login is a sign-in form at fixed places (a takeover taps by position); its POST sets the
// session and goes home; a signed-in visitor goes home at once.
func (s *site) login(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodPost {
		if r.FormValue("user") == "alice" && r.FormValue("pass") == "s3cret" {
			http.SetCookie(w, &http.Cookie{Name: "session", Value: "alice-session", Path: "/", HttpOnly: true})
			http.Redirect(w, r, "/home?fresh=1", http.StatusSeeOther)
			return
		}
	}
	if _, err := r.Cookie("session"); err == nil {
		http.Redirect(w, r, "/home", http.StatusFound)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	fmt.Fprint(w, `<!doctype html><html><head><title>Sign in</title><style>body{margin:0} input{position:absolute;left:100px;width:300px;height:40px;font-size:20px}</style></head><body>
<form method="post" action="/login"><input name="user" id="user" autocomplete="username" style="top:100px"><input name="pass" id="pass" type="password" style="top:200px"><button type="submit" style="position:absolute;top:300px;left:100px">Sign in</button></form></body></html>`)
}

func template(s string) string {
	r := []rune{}
	for _, c := range s {
		switch c {
		case '<', '>', '&', '"':
			continue
		}
		r = append(r, c)
	}
	return string(r)
}

// manyElements is a page of n elements: buttons, links, inputs and text rows.
func manyElements(n int) string {
	var b []byte
	b = append(b, "<h1>A thousand things</h1>"...)
	for i := 0; i < n; i++ {
		switch i % 4 {
		case 0:
			b = fmt.Appendf(b, `<button>Button %d</button>`, i)
		case 1:
			b = fmt.Appendf(b, `<a href="#%d">Link %d</a>`, i, i)
		case 2:
			b = fmt.Appendf(b, `<input aria-label="Field %d" value="v%d">`, i, i)
		default:
			b = fmt.Appendf(b, `<p>Row %d of the table of things</p>`, i)
		}
	}
	return string(b)
}
