package browser

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"image/jpeg"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"
)

const work = Work("run:j1")

// env is one broker for the whole test, with its site and the site it refuses.
type env struct {
	b       *Broker
	clk     *clock
	site    *site
	refused *site
	signIns chan string
	dir     string
}

func newEnv(t *testing.T) *env {
	needChromium(t)
	e := &env{clk: &clock{t: time.Date(2026, 12, 3, 8, 0, 0, 0, time.UTC)}, signIns: make(chan string, 8), dir: t.TempDir()}
	e.refused = newSite(t, "")
	e.site = newSite(t, e.refused.URL)
	e.b = New(Config{
		DataDir:  e.dir,
		Headless: true,
		Now:      e.clk.now,
		Refuse: func(u string) string {
			if strings.HasPrefix(u, e.refused.URL) {
				return "is Ensemble itself"
			}
			return ""
		},
		OnSignIn: func(w Work, tab string, ok bool, how string) {
			e.signIns <- tab + " " + map[bool]string{true: "ok", false: "no"}[ok] + " " + how
		},
	})
	t.Cleanup(e.b.Close)
	return e
}

func (e *env) open(t *testing.T, path string, o OpenOptions) Page {
	t.Helper()
	o.Work = work
	if o.Owner == "" {
		o.Owner = "owner1"
	}
	o.URL = e.site.URL + path
	p, err := e.b.Open(context.Background(), o)
	if err != nil {
		t.Fatalf("open %s: %v", path, err)
	}
	t.Cleanup(func() { e.b.CloseTab(context.Background(), work, p.Tab) })
	return p
}

func (e *env) snap(t *testing.T, tab string) Snapshot {
	t.Helper()
	s, err := e.b.Snapshot(context.Background(), work, tab, SnapshotOptions{})
	if err != nil {
		t.Fatalf("snapshot: %v", err)
	}
	return s
}

// refOf finds the reference of the first line with role and name.
func refOf(t *testing.T, s Snapshot, role, name string) string {
	t.Helper()
	for _, l := range strings.Split(s.Text, "\n") {
		l = strings.TrimSpace(l)
		if strings.HasPrefix(l, "- "+role+" \""+name+"\"") {
			_, r, _ := strings.Cut(l, "[ref=")
			r, _, _ = strings.Cut(r, "]")
			return r
		}
	}
	t.Fatalf("no %s %q in:\n%s", role, name, s.Text)
	return ""
}

func TestBroker(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()

	t.Run("snapshot click type press", func(t *testing.T) {
		p := e.open(t, "/", OpenOptions{})
		if p.Title != "Home" || p.SignIn != nil {
			t.Fatalf("open: %+v", p)
		}
		s := e.snap(t, p.Tab)
		for _, want := range []string{`- heading "Test shop" [level=1]`, `- button "Save" [ref=`, `- link "Docs" [ref=`, `: old`, "Nothing yet"} {
			if !strings.Contains(s.Text, want) {
				t.Errorf("snapshot lacks %q:\n%s", want, s.Text)
			}
		}
		if _, err := e.b.Click(ctx, work, p.Tab, refOf(t, s, "button", "Save")); err != nil {
			t.Fatal(err)
		}
		if s = e.snap(t, p.Tab); !strings.Contains(s.Text, "Saved!") {
			t.Fatalf("the click did not change the text:\n%s", s.Text)
		}
		q := refOf(t, s, "textbox", "Query")
		if _, err := e.b.Type(ctx, work, p.Tab, q, "shoes", false); err != nil {
			t.Fatal(err)
		}
		if _, err := e.b.Press(ctx, work, p.Tab, "Enter"); err != nil {
			t.Fatal(err)
		}
		pg, err := e.b.Wait(ctx, work, p.Tab, WaitOptions{URL: "/search", Text: "Results for shoes", Timeout: 10 * time.Second})
		if err != nil {
			t.Fatalf("the form was not submitted: %v", err)
		}
		if !strings.Contains(pg.URL, "q=shoes") {
			t.Fatalf("submitted %s", pg.URL)
		}
		if _, err := e.b.Click(ctx, work, p.Tab, q); !errors.Is(err, ErrNoRef) {
			t.Fatalf("a reference of the old page: %v", err)
		}
		// A link click navigates.
		e.b.Navigate(ctx, work, p.Tab, e.site.URL+"/")
		s = e.snap(t, p.Tab)
		pg, err = e.b.Click(ctx, work, p.Tab, refOf(t, s, "link", "Docs"))
		if err != nil || pg.Title != "Docs" {
			t.Fatalf("link: %+v %v", pg, err)
		}
		s, _ = e.b.Snapshot(ctx, work, p.Tab, SnapshotOptions{Interactive: true})
		if strings.Contains(s.Text, "Read me") || !strings.Contains(s.Text, "Docs page") {
			t.Fatalf("interactive snapshot:\n%s", s.Text)
		}
	})

	t.Run("not yours", func(t *testing.T) {
		p := e.open(t, "/docs", OpenOptions{})
		if _, err := e.b.Snapshot(ctx, "run:other", p.Tab, SnapshotOptions{}); !errors.Is(err, ErrNotYours) {
			t.Fatalf("got %v", err)
		}
		if _, err := e.b.Snapshot(ctx, work, "t999", SnapshotOptions{}); !errors.Is(err, ErrNoTab) {
			t.Fatalf("got %v", err)
		}
	})

	t.Run("looks like chrome", func(t *testing.T) {
		p := e.open(t, "/agent", OpenOptions{})
		tb, _ := e.b.use(work, p.Tab, false)
		raw, err := chromedp.Run(tb.context(), chromedp.Text(chromedp.ID("wd")))
		if err != nil {
			t.Fatal(err)
		}
		var got struct {
			WD   bool   `json:"wd"`
			UA   string `json:"ua"`
			Lang string `json:"lang"`
			TZ   string `json:"tz"`
		}
		if err := json.Unmarshal([]byte(raw), &got); err != nil {
			t.Fatalf("%v: %s", err, raw)
		}
		if got.WD || strings.Contains(got.UA, "Headless") || !strings.Contains(got.UA, "Chrome/") {
			t.Fatalf("the page sees automation: %+v", got)
		}
		if got.Lang != language() {
			t.Errorf("language %q, want %q", got.Lang, language())
		}
		if tz := timeZone(); tz != "" && got.TZ != tz && !(strings.HasSuffix(tz, "UTC") && strings.HasSuffix(got.TZ, "UTC")) {
			t.Errorf("time zone %q, want %q", got.TZ, tz)
		}
	})

	t.Run("popup shares its lease", func(t *testing.T) {
		p := e.open(t, "/", OpenOptions{})
		s := e.snap(t, p.Tab)
		pg, err := e.b.Click(ctx, work, p.Tab, refOf(t, s, "button", "Open window"))
		if err != nil {
			t.Fatal(err)
		}
		if len(pg.Popups) != 1 || pg.Popups[0].OpenedBy != p.Tab || !pg.Popups[0].Popup || pg.Note == "" {
			t.Fatalf("popups: %+v", pg)
		}
		pop := pg.Popups[0].ID
		t.Cleanup(func() { e.b.CloseTab(ctx, work, pop) })
		ps := e.snap(t, pop)
		if !strings.Contains(ps.Text, `button "Pay"`) {
			t.Fatalf("popup snapshot:\n%s", ps.Text)
		}
		found := false
		for _, ti := range e.b.Tabs(work) {
			found = found || (ti.ID == pop && ti.Popup && ti.OpenedBy == p.Tab)
		}
		if !found {
			t.Fatalf("tabs: %+v", e.b.Tabs(work))
		}
		// Using the popup keeps the opener too.
		e.clk.add(9 * time.Minute)
		e.snap(t, pop)
		e.clk.add(2 * time.Minute)
		e.b.sweep()
		if _, err := e.b.use(work, p.Tab, false); err != nil {
			t.Fatalf("the opener lapsed though its popup was used: %v", err)
		}
		e.clk.add(11 * time.Minute)
		e.b.sweep()
		for _, id := range []string{p.Tab, pop} {
			if _, err := e.b.use(work, id, false); !errors.Is(err, ErrNoTab) {
				t.Fatalf("%s outlived its lease: %v", id, err)
			}
		}
	})

	t.Run("address policy", func(t *testing.T) {
		_, err := e.b.Open(ctx, OpenOptions{Work: work, Owner: "owner1", URL: e.refused.URL + "/"})
		if !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), "Ensemble itself") {
			t.Fatalf("refused origin opened: %v", err)
		}
		if _, err := e.b.Open(ctx, OpenOptions{Work: work, URL: "file:///etc/passwd"}); !errors.Is(err, ErrRefused) {
			t.Fatalf("file: %v", err)
		}
		p := e.open(t, "/docs", OpenOptions{})
		if _, err := e.b.Navigate(ctx, work, p.Tab, e.site.URL+"/to-other"); !errors.Is(err, ErrRefused) {
			t.Fatalf("a redirect to a refused origin: %v", err)
		}
		lp := e.open(t, "/offline", OpenOptions{Network: LocalOnly})
		if lp.Title != "Offline" {
			t.Fatalf("local page: %+v", lp)
		}
		var blocked bool
		for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline) && !blocked; time.Sleep(50 * time.Millisecond) {
			errs, _ := e.b.NetworkErrors(work, lp.Tab)
			for _, ne := range errs {
				blocked = blocked || (strings.Contains(ne.URL, "203.0.113.1") && strings.HasPrefix(ne.Error, "net::ERR_BLOCKED_BY_CLIENT"))
			}
		}
		if !blocked {
			errs, _ := e.b.NetworkErrors(work, lp.Tab)
			t.Fatalf("the internet request was not blocked: %+v", errs)
		}
	})

	t.Run("console and network errors", func(t *testing.T) {
		p := e.open(t, "/errors", OpenOptions{})
		var cons []ConsoleEntry
		var nets []NetError
		for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
			cons, _ = e.b.Console(work, p.Tab)
			nets, _ = e.b.NetworkErrors(work, p.Tab)
			if len(cons) >= 2 && len(nets) >= 1 {
				break
			}
		}
		var sawErr, sawExc, saw404 bool
		for _, c := range cons {
			sawErr = sawErr || (c.Level == "error" && strings.Contains(c.Text, "boom from page"))
			sawExc = sawExc || (c.Level == "exception" && strings.Contains(c.Text, "uncaught kaboom"))
		}
		for _, n := range nets {
			saw404 = saw404 || (n.Status == 404 && strings.HasSuffix(n.URL, "/missing.png") && n.Type == "Image")
		}
		if !sawErr || !sawExc || !saw404 {
			t.Fatalf("console %+v network %+v", cons, nets)
		}
	})

	t.Run("extract", func(t *testing.T) {
		p := e.open(t, "/table", OpenOptions{})
		x, err := e.b.Extract(ctx, work, p.Tab)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(x.Markdown, "$19.99") || !strings.Contains(x.Markdown, "Widget") {
			t.Fatalf("markdown:\n%s", x.Markdown)
		}
	})

	t.Run("download and fetch", func(t *testing.T) {
		p := e.open(t, "/download", OpenOptions{})
		s := e.snap(t, p.Tab)
		dir := t.TempDir()
		f, err := e.b.Download(ctx, work, p.Tab, refOf(t, s, "link", "Get the report"), dir)
		if err != nil {
			t.Fatal(err)
		}
		if b, _ := os.ReadFile(f.Path); f.Name != "report.csv" || string(b) != "a,b\n1,2\n" || !strings.HasPrefix(f.Mime, "text/") {
			t.Fatalf("download %+v %q", f, b)
		}
		g, err := e.b.Fetch(ctx, work, p.Tab, e.site.URL+"/report.csv", dir)
		if err != nil {
			t.Fatal(err)
		}
		if g.Name != "report (1).csv" || g.Size != 8 {
			t.Fatalf("fetch %+v", g)
		}
		if _, err := e.b.Fetch(ctx, work, p.Tab, e.refused.URL+"/report.csv", dir); !errors.Is(err, ErrRefused) {
			t.Fatalf("fetch from a refused origin: %v", err)
		}
	})

	t.Run("screenshots", func(t *testing.T) {
		p := e.open(t, "/password", OpenOptions{})
		out := filepath.Join(os.TempDir(), "ensemble-browser-shots")
		os.MkdirAll(out, 0o755)
		for _, w := range []int{1280, 390} {
			h := 800
			if w == 390 {
				h = 844
			}
			shot, err := e.b.Screenshot(ctx, work, p.Tab, ShotOptions{Width: w, Height: h})
			if err != nil {
				t.Fatal(err)
			}
			if shot.Masked != 1 || shot.Mime != "image/png" || len(shot.Image) < 1000 {
				t.Fatalf("shot %d: masked %d mime %s size %d", w, shot.Masked, shot.Mime, len(shot.Image))
			}
			if strings.Contains(shot.Text, "hunter2") || !strings.Contains(shot.Text, "alice@example.com") {
				t.Fatalf("shot text: %q", shot.Text)
			}
			os.WriteFile(filepath.Join(out, fmt.Sprintf("browser-%d.png", w)), shot.Image, 0o644)
		}
		// The mask is gone after the shot.
		tb, _ := e.b.use(work, p.Tab, false)
		style, _ := chromedp.Run(tb.context(), chromedp.Evaluate[string](`document.getElementById('p').getAttribute('style') || ''`))
		if style != "" {
			t.Fatalf("mask left: %q", style)
		}
		s := e.snap(t, p.Tab)
		if strings.Contains(s.Text, "hunter2") {
			t.Fatalf("a snapshot shows a password:\n%s", s.Text)
		}
		el, err := e.b.Screenshot(ctx, work, p.Tab, ShotOptions{Ref: refOf(t, s, "textbox", "Email"), Quality: 70})
		if err != nil || el.Mime != "image/jpeg" || el.Width > 400 {
			t.Fatalf("element shot: %v %s %dx%d", err, el.Mime, el.Width, el.Height)
		}
		full, err := e.b.Screenshot(ctx, work, p.Tab, ShotOptions{FullPage: true})
		if err != nil || len(full.Image) == 0 {
			t.Fatalf("full page: %v", err)
		}
	})

	t.Run("glance", func(t *testing.T) {
		p := e.open(t, "/password", OpenOptions{})
		before := e.b.Tabs(work)
		g, err := e.b.Glance(ctx, work, p.Tab, 640, 45)
		if err != nil {
			t.Fatal(err)
		}
		img, err := jpeg.Decode(bytes.NewReader(g.Image))
		if err != nil || g.Mime != "image/jpeg" || img.Bounds().Dx() != 640 || img.Bounds().Dy() != 400 || g.Width != 640 || g.Height != 400 {
			t.Fatalf("glance: %v %s %dx%d, picture %v", err, g.Mime, g.Width, g.Height, img.Bounds())
		}
		if g.Masked != 1 || strings.Contains(g.Text, "hunter2") || g.Tab != p.Tab || g.URL == "" {
			t.Fatalf("glance: masked %d, page %+v, text %q", g.Masked, g.Page, g.Text)
		}
		for _, ti := range e.b.Tabs(work) {
			for _, b := range before {
				if ti.ID == b.ID && !ti.LeaseEnds.Equal(b.LeaseEnds) {
					t.Fatalf("a glance renewed %s's lease", ti.ID)
				}
			}
		}
		tb, _ := e.b.use(work, p.Tab, false)
		tb.act.Lock()
		_, err = e.b.Glance(ctx, work, p.Tab, 640, 45)
		tb.act.Unlock()
		if !errors.Is(err, ErrBusy) {
			t.Fatalf("a glance during an action: %v", err)
		}
		if _, err := e.b.Glance(ctx, Work("run:other"), p.Tab, 640, 45); !errors.Is(err, ErrNotYours) {
			t.Fatalf("a glance at another work's tab: %v", err)
		}
		os.WriteFile(filepath.Join(os.TempDir(), "ensemble-browser-shots", "browser-glance.jpg"), g.Image, 0o644)
	})

	t.Run("reopen under an id, private tab, status", func(t *testing.T) {
		p := e.open(t, "/docs", OpenOptions{Tab: "t77", Private: true})
		if p.Tab != "t77" {
			t.Fatalf("tab id %s", p.Tab)
		}
		q := e.open(t, "/docs", OpenOptions{Tab: "t77"})
		if q.Tab == "t77" {
			t.Fatal("a used id was given twice")
		}
		if ti := e.b.Tabs(work); len(ti) != 2 || !ti[0].Private && !ti[1].Private {
			t.Fatalf("tabs: %+v", ti)
		}
		st := e.b.Status(ctx)
		if !st.Running || st.Tabs != 2 || st.Version == "" || st.Problem != "" || st.Chromium == "" {
			t.Fatalf("status: %+v", st)
		}
	})

	t.Run("held page closed by itself comes back", func(t *testing.T) {
		p := e.open(t, "/docs", OpenOptions{})
		if err := e.b.Hold(ctx, work, p.Tab, "sign_in", SignedInCheck{Selector: "#never"}); err != nil {
			t.Fatal(err)
		}
		tb, _ := e.b.use(work, p.Tab, true)
		old := tb.context()
		c := chromedp.FromContext(old)
		if _, err := chromedp.CallBrowser(old, target.CloseTarget, target.CloseTargetParams{TargetID: c.Target.TargetID}); err != nil {
			t.Fatal(err)
		}
		for deadline := time.Now().Add(15 * time.Second); ; time.Sleep(50 * time.Millisecond) {
			tb.mu.Lock()
			back := tb.ctx != old && strings.HasSuffix(tb.url, "/docs")
			tb.mu.Unlock()
			if back {
				break
			}
			if time.Now().After(deadline) {
				t.Fatal("the held tab did not open again")
			}
		}
		if ti := e.b.Tabs(work); len(ti) != 1 || ti[0].ID != p.Tab || !ti[0].Held {
			t.Fatalf("tabs: %+v", ti)
		}
	})
}

func TestStatusWithoutChromium(t *testing.T) {
	b := New(Config{Chromium: "/nonexistent/chromium", DataDir: t.TempDir()})
	defer b.Close()
	st := b.Status(context.Background())
	if st.Problem != installHint || st.Running {
		t.Fatalf("status: %+v", st)
	}
	if _, err := b.Open(context.Background(), OpenOptions{Work: work, URL: "about:blank"}); !errors.Is(err, ErrNoChromium) {
		t.Fatalf("open: %v", err)
	}
}
