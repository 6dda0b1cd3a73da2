package browser

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// waitSignIn waits for OnSignIn.
func (e *env) waitSignIn(t *testing.T, within time.Duration) string {
	t.Helper()
	select {
	case s := <-e.signIns:
		return s
	case <-time.After(within):
		t.Fatal("OnSignIn was not called")
		return ""
	}
}

func TestSignIn(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()

	t.Run("held, then signed in through the clean browser", func(t *testing.T) {
		// The site is on 127.0.0.1: this computer's own, so the detection is a hint only.
		p := e.open(t, "/login", OpenOptions{Owner: "alice"})
		if p.SignIn == nil || p.SignIn.Purpose != "sign_in" || p.SignIn.Why != "a password field" || !p.SignIn.HintOnly {
			t.Fatalf("sign-in not seen: %+v", p.SignIn)
		}
		if err := e.b.Hold(ctx, work, p.Tab, "sign_in", SignedInCheck{}); err != nil {
			t.Fatal(err)
		}
		if _, err := e.b.Snapshot(ctx, work, p.Tab, SnapshotOptions{}); !errors.Is(err, ErrSensitive) {
			t.Fatalf("a held tab was read: %v", err)
		}
		if _, err := e.b.Screenshot(ctx, work, p.Tab, ShotOptions{}); !errors.Is(err, ErrSensitive) {
			t.Fatalf("a held tab was captured: %v", err)
		}
		if ti := e.b.Tabs(work); len(ti) != 1 || !ti[0].Held || ti[0].Sensitive != "sign_in" {
			t.Fatalf("tabs: %+v", ti)
		}
		visible, err := e.b.OpenClean(ctx, work, p.Tab)
		if err != nil || visible {
			t.Fatalf("open clean: visible %v err %v", visible, err)
		}
		frames := make(chan Frame, 16)
		stop, err := e.b.Screencast(ctx, work, p.Tab, ScreencastOptions{MaxWidth: 1280, Quality: 55}, func(f Frame) {
			select {
			case frames <- f:
			default:
			}
		})
		if err != nil {
			t.Fatal(err)
		}
		defer stop()
		select {
		case f := <-frames:
			if len(f.JPEG) == 0 || !strings.HasSuffix(f.URL, "/login") || f.Title != "Sign in" {
				t.Fatalf("frame: %d bytes %s %q", len(f.JPEG), f.URL, f.Title)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("no frame from the clean browser")
		}
		// The person: the login form's fields sit at fixed places of a 1280×800 page.
		for _, in := range []Input{
			{Kind: "tap", X: 250.0 / 1280, Y: 120.0 / 800}, {Kind: "text", Text: "alice"},
			{Kind: "tap", X: 250.0 / 1280, Y: 220.0 / 800}, {Kind: "text", Text: "s3cret"},
			{Kind: "key", Key: "Enter"},
		} {
			if err := e.b.Input(ctx, work, p.Tab, in); err != nil {
				t.Fatalf("input %s: %v", in.Kind, err)
			}
		}
		if got := e.waitSignIn(t, 20*time.Second); got != p.Tab+" ok clean" {
			t.Fatalf("OnSignIn: %s", got)
		}
		if !e.site.sawSession("alice-session") {
			t.Fatal("the node tab did not send the session the clean browser got")
		}
		if e.b.cleanOf(p.Tab) != nil {
			t.Fatal("the clean browser is still open")
		}
		if err := e.b.Release(ctx, work, p.Tab, false); err != nil {
			t.Fatal(err)
		}
		s, err := e.b.Snapshot(ctx, work, p.Tab, SnapshotOptions{})
		if err != nil || !strings.Contains(s.Text, "Welcome back") {
			t.Fatalf("after release: %v\n%s", err, s.Text)
		}
		tb, _ := e.b.use(work, p.Tab, false)
		if v, _ := chromedp.Run(tb.context(), chromedp.Evaluate[string](`localStorage.getItem('prefs') || ''`)); v != "dark" {
			t.Fatalf("the site's local storage did not move: %q", v)
		}
	})

	t.Run("signed in on the tab itself", func(t *testing.T) {
		p := e.open(t, "/login", OpenOptions{Owner: "bob"})
		if err := e.b.Hold(ctx, work, p.Tab, "sign_in", SignedInCheck{}); err != nil {
			t.Fatal(err)
		}
		for _, in := range []Input{
			{Kind: "tap", X: 250.0 / 1280, Y: 120.0 / 800}, {Kind: "text", Text: "alice"},
			{Kind: "tap", X: 250.0 / 1280, Y: 220.0 / 800}, {Kind: "text", Text: "s3cret"}, {Kind: "key", Key: "Enter"},
		} {
			if err := e.b.Input(ctx, work, p.Tab, in); err != nil {
				t.Fatalf("input %s: %v", in.Kind, err)
			}
		}
		if got := e.waitSignIn(t, 15*time.Second); got != p.Tab+" ok tab" {
			t.Fatalf("OnSignIn: %s", got)
		}
		if ok, err := e.b.CheckSignIn(ctx, work, p.Tab); !ok || err != nil {
			t.Fatalf("check: %v %v", ok, err)
		}
		if _, err := e.b.Snapshot(ctx, work, p.Tab, SnapshotOptions{}); !errors.Is(err, ErrSensitive) {
			t.Fatalf("seen done, the tab stays held until released: %v", err)
		}
	})

	t.Run("held tab comes back after Chromium is killed", func(t *testing.T) {
		p := e.open(t, "/password", OpenOptions{Owner: "crashy"})
		if err := e.b.Hold(ctx, work, p.Tab, "sign_in", SignedInCheck{}); err != nil {
			t.Fatal(err)
		}
		tb, _ := e.b.use(work, p.Tab, true)
		old := tb.context()
		proc := chromedp.FromContext(old).Browser.Process()
		if proc == nil {
			t.Fatal("no Chromium process")
		}
		before := e.b.Status(ctx).Restarts
		if err := proc.Kill(); err != nil {
			t.Fatal(err)
		}
		deadline := time.Now().Add(30 * time.Second)
		for {
			tb.mu.Lock()
			back := tb.ctx != old && tb.proc != nil && tb.proc.alive() && strings.HasSuffix(tb.url, "/password") && !tb.loading
			tb.mu.Unlock()
			if back {
				break
			}
			if time.Now().After(deadline) {
				t.Fatal("the held tab did not come back")
			}
			time.Sleep(50 * time.Millisecond)
		}
		ti := e.b.Tabs(work)
		if len(ti) != 1 || ti[0].ID != p.Tab || !ti[0].Held {
			t.Fatalf("tabs after the crash: %+v", ti)
		}
		if st := e.b.Status(ctx); st.Restarts != before+1 || !st.Running {
			t.Fatalf("status: %+v", st)
		}
		if _, err := e.b.Snapshot(ctx, work, p.Tab, SnapshotOptions{}); !errors.Is(err, ErrSensitive) {
			t.Fatalf("the reopened tab is not held: %v", err)
		}
		if err := e.b.Release(ctx, work, p.Tab, true); err != nil {
			t.Fatal(err)
		}
		if pg := e.b.pageOf(ctx, tb); pg.URL != "about:blank" {
			t.Fatalf("release clear: %s", pg.URL)
		}
	})

	t.Run("expired", func(t *testing.T) {
		p := e.open(t, "/docs", OpenOptions{Owner: "alice"})
		if err := e.b.Hold(ctx, work, p.Tab, "human_check", SignedInCheck{Selector: "#never"}); err != nil {
			t.Fatal(err)
		}
		e.clk.add(HoldLimit + time.Minute)
		e.b.sweep()
		if got := e.waitSignIn(t, 5*time.Second); got != p.Tab+" no expired" {
			t.Fatalf("OnSignIn: %s", got)
		}
		if _, err := e.b.use(work, p.Tab, true); !errors.Is(err, ErrNoTab) {
			t.Fatalf("an expired hold's tab stayed: %v", err)
		}
	})
}
