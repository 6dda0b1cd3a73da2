package jobs

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/ensemblework/ensemble/browser"
)

// realBroker is the Chromium broker over Debian's chromium: skipped without one, except on CI.
// onSignIn, when set, hears the broker's sign-ins seen done.
func realBroker(t *testing.T, onSignIn ...func(browser.Work, string, bool, string)) *browser.Broker {
	t.Helper()
	if _, err := exec.LookPath("chromium"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("Chromium is missing on CI: install it (apt install chromium)")
		}
		t.Skip("no Chromium on this computer: install it to run the run's browser tests")
	}
	cfg := browser.Config{DataDir: t.TempDir(), Headless: true}
	if len(onSignIn) > 0 {
		cfg.OnSignIn = onSignIn[0]
	}
	b := browser.New(cfg)
	t.Cleanup(func() { b.Close() })
	return b
}

// filesSite is a site with a report page, a download, a key file, a page showing a token, a
// blank page and a form with a file input that shows what was chosen.
func filesSite(t *testing.T) *httptest.Server {
	mux := http.NewServeMux()
	page := func(title, body string) string {
		return fmt.Sprintf(`<!doctype html><html><head><meta charset="utf-8"><title>%s</title></head><body style="font:16px sans-serif;margin:24px">%s</body></html>`, title, body)
	}
	mux.HandleFunc("/{$}", func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, page("Report", `<h1>Quarterly numbers</h1><p>Sales rose by a tenth.</p><a href="/report.csv" download>Get the report</a>`))
	})
	mux.HandleFunc("/report.csv", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/csv")
		w.Header().Set("Content-Disposition", `attachment; filename="report.csv"`)
		io.WriteString(w, "quarter,sales\nQ3,110\n")
	})
	mux.HandleFunc("/key.txt", func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n-----END OPENSSH PRIVATE KEY-----\n")
	})
	mux.HandleFunc("/token", func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, page("Tokens", `<h1>Your token</h1><p>ghp_0123456789abcdefghijklmnopqrstuvwxyzAB</p>`))
	})
	mux.HandleFunc("/blank", func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, page("Blank", ``))
	})
	mux.HandleFunc("/form", func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, page("Upload", `<label>Photo <input type="file" id="f" aria-label="Photo"></label><p id="out">none</p>
<script>document.getElementById('f').onchange=e=>{document.getElementById('out').textContent='chose '+e.target.files[0].name}</script>`))
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

var evidenceID = regexp.MustCompile(`evidence (evd_[0-9a-f]{16})`)

// The run's view, fetch, download, upload and capture_check tools against real Chromium: what
// they keep is the run's evidence at once, served by its id; a page or a file showing a key or a
// token is held, not served and not seen; an upload never sends a key file or a saved secret.
func TestRunBrowserFileTools(t *testing.T) {
	if testing.Short() {
		t.Skip("starts Chromium")
	}
	site := filesSite(t)
	e, j, sess := runClient(t, nil, func(o *Options) {
		o.Browser = realBroker(t)
		o.Hide = func(s string) string { return strings.ReplaceAll(s, "hunter2-kept", "[hidden]") }
	})
	call := func(name string, args map[string]any, wantErr bool) string {
		t.Helper()
		text, isErr := callText(t, sess, name, args)
		if isErr != wantErr {
			t.Fatalf("%s %v: error %v, want %v: %s", name, args, isErr, wantErr, text)
		}
		return text
	}
	kept := func(text string) string {
		t.Helper()
		m := evidenceID.FindStringSubmatch(text)
		if m == nil {
			t.Fatalf("no evidence id in %q", text)
		}
		f, _, err := e.svc.EvidenceFile(j.ID, m[1])
		if err != nil {
			t.Fatalf("evidence %s is not served: %v", m[1], err)
		}
		f.Close()
		return m[1]
	}

	view := call("browser_view", map[string]any{"url": site.URL + "/"}, false)
	if !strings.Contains(view, "Quarterly numbers") || !strings.Contains(view, "Kept the screenshot") {
		t.Fatalf("browser_view: %q", view)
	}
	shot := kept(view)
	check := call("capture_check", map[string]any{"evidence": shot, "expectText": "quarterly numbers"}, false)
	if !strings.Contains(check, "Not blank passed") || !strings.Contains(check, "Expected text passed") {
		t.Fatalf("capture_check of the report: %q", check)
	}
	blank := kept(call("capture_screenshot", map[string]any{"url": site.URL + "/blank", "device": "phone"}, false))
	if check := call("capture_check", map[string]any{"evidence": blank}, false); !strings.Contains(check, "Not blank FAILED") {
		t.Fatalf("capture_check of a blank page: %q", check)
	}
	call("capture_check", map[string]any{"evidence": "evd_0000000000000000"}, true)

	csv := kept(call("browser_fetch", map[string]any{"url": site.URL + "/report.csv"}, false))
	f, name, _ := e.svc.EvidenceFile(j.ID, csv)
	body, _ := io.ReadAll(f)
	f.Close()
	if name != "report.csv" || string(body) != "quarter,sales\nQ3,110\n" {
		t.Fatalf("the fetched report: %q %q", name, body)
	}
	tab := regexp.MustCompile(`Tab (t\d+)`).FindStringSubmatch(view)[1]
	snap := call("browser_snapshot", map[string]any{"tab": tab}, false)
	link := regexp.MustCompile(`link "Get the report" \[ref=(e\d+)\]`).FindStringSubmatch(snap)
	if link == nil {
		t.Fatalf("no download link in %q", snap)
	}
	kept(call("browser_download", map[string]any{"tab": tab, "ref": link[1]}, false))

	held := call("browser_fetch", map[string]any{"url": site.URL + "/key.txt"}, false)
	if !strings.Contains(held, "held for the person's preview") || evidenceID.MatchString(held) {
		t.Fatalf("a key file fetched: %q", held)
	}
	heldView := call("browser_view", map[string]any{"url": site.URL + "/token"}, false)
	if !strings.Contains(heldView, "held for the person's preview") || strings.Contains(heldView, "ghp_") || strings.Contains(heldView, "Your token") {
		t.Fatalf("a page showing a token: %q", heldView)
	}
	files, _ := filepath.Glob(filepath.Join(e.data, "evidence", j.ID, "held", "evd_*"))
	if len(files) != 2 {
		t.Fatalf("held files %v, want the key file and the token's screenshot", files)
	}
	for _, p := range files {
		id := strings.SplitN(filepath.Base(p), "-", 2)[0]
		if _, _, err := e.svc.EvidenceFile(j.ID, id); err == nil {
			t.Fatalf("held %s is served as evidence", id)
		}
	}

	ctx := context.Background()
	list, err := e.svc.HeldFiles(ctx, j.ID)
	if err != nil || len(list) != 2 {
		t.Fatalf("HeldFiles: %v %+v", err, list)
	}
	for _, h := range list {
		if f, _, err := e.svc.HeldFile(j.ID, h.ID); err != nil {
			t.Fatalf("the person cannot preview %s: %v", h.Name, err)
		} else {
			f.Close()
		}
	}
	ev, err := e.svc.ReleaseHeld(ctx, j.ID, list[0].ID)
	if err != nil || ev.ID != list[0].ID {
		t.Fatalf("release %s: %+v %v", list[0].Name, ev, err)
	}
	kept("evidence " + ev.ID)
	if _, err := e.svc.ReleaseHeld(ctx, j.ID, list[0].ID); !errors.Is(err, ErrNoHeld) {
		t.Fatalf("a second release: %v", err)
	}
	if err := e.svc.DiscardHeld(ctx, j.ID, list[1].ID); err != nil {
		t.Fatalf("discard: %v", err)
	}
	if left, _ := e.svc.HeldFiles(ctx, j.ID); len(left) != 0 {
		t.Fatalf("still held after release and discard: %+v", left)
	}
	if _, _, err := e.svc.EvidenceFile(j.ID, list[1].ID); err == nil {
		t.Fatal("a discarded file is served")
	}
	for _, bad := range []string{"../x", "evd_*", "evd_" + strings.Repeat("0", 16)} {
		if _, _, err := e.svc.HeldFile(j.ID, bad); !errors.Is(err, ErrNoHeld) {
			t.Fatalf("HeldFile(%q): %v", bad, err)
		}
	}

	os.WriteFile(filepath.Join(e.folder, "photo.txt"), []byte("a photo"), 0o600)
	os.WriteFile(filepath.Join(e.folder, ".env"), []byte("TOKEN=x"), 0o600)
	os.WriteFile(filepath.Join(e.folder, "notes.txt"), []byte("password hunter2-kept"), 0o600)
	call("browser_open", map[string]any{"url": site.URL + "/form", "tab": tab}, false)
	snap = call("browser_snapshot", map[string]any{"tab": tab}, false)
	input := regexp.MustCompile(`"Photo" \[ref=(e\d+)\]`).FindStringSubmatch(snap)
	if input == nil {
		t.Fatalf("no file input in %q", snap)
	}
	for _, bad := range []string{".env", "notes.txt", "missing.txt"} {
		call("browser_upload", map[string]any{"tab": tab, "ref": input[1], "path": bad}, true)
	}
	call("browser_upload", map[string]any{"tab": tab, "ref": input[1], "path": "photo.txt"}, false)
	call("browser_wait", map[string]any{"tab": tab, "text": "chose photo.txt"}, false)
}
