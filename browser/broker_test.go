package browser

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

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
		if tz := timeZone(); tz != "" && got.TZ != tz {
			t.Errorf("time zone %q, want %q", got.TZ, tz)
		}
	})
}
