package jobs

import (
	"bytes"
	"context"
	"encoding/json"
	"image/jpeg"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/ensemblework/ensemble/browser"
	"github.com/ensemblework/ensemble/runtime/events"
)

// While a run's agent uses a tab the person sees a small picture of it, taken by itself and kept
// only in memory; a page showing a key is not pictured, and the picture goes with the tab.
func TestRunLivePicture(t *testing.T) {
	if testing.Short() {
		t.Skip("starts Chromium")
	}
	site := filesSite(t)
	bus := events.NewBus()
	sub := bus.Subscribe(64)
	defer sub.Close()
	e, j, sess := runClient(t, nil, func(o *Options) {
		o.Browser = realBroker(t)
		o.Bus = bus
		o.Timing.Live = 100 * time.Millisecond
		o.SiteRule = func(_ context.Context, site string) string {
			return map[string]string{"localhost": SiteNever}[site]
		}
	})
	wait := func(what string, ok func(LivePicture, bool) bool) LivePicture {
		t.Helper()
		var (
			p   LivePicture
			has bool
		)
		for end := time.Now().Add(30 * time.Second); time.Now().Before(end); time.Sleep(50 * time.Millisecond) {
			if p, has = e.svc.LivePicture(j.ID); ok(p, has) {
				return p
			}
		}
		t.Fatalf("no live picture %s: %+v (%v)", what, p.Live, has)
		return p
	}
	if _, has := e.svc.LivePicture(j.ID); has {
		t.Fatal("a picture before any tab")
	}
	text, isErr := callText(t, sess, "browser_open", map[string]any{"url": site.URL + "/?key=abc"})
	if isErr {
		t.Fatal(text)
	}
	tab := regexp.MustCompile(`Tab (t\d+)`).FindStringSubmatch(text)[1]
	p := wait("of the report", func(p LivePicture, has bool) bool { return has && len(p.Image) > 0 && p.Title == "Report" })
	img, err := jpeg.Decode(bytes.NewReader(p.Image))
	if err != nil || img.Bounds().Dx() != liveWidth || p.Tab != tab || p.Title != "Report" || strings.Contains(p.URL, "abc") || p.Paused != "" {
		t.Fatalf("picture %+v: %v", p.Live, err)
	}

	callText(t, sess, "browser_open", map[string]any{"url": site.URL + "/token", "tab": tab})
	p = wait("paused for the token", func(p LivePicture, has bool) bool { return has && p.Paused == PausedSecret })
	if len(p.Image) != 0 {
		t.Fatal("a page showing a token was pictured")
	}
	// A tab held for the person's sign-in is not pictured either.
	b := e.svc.opts.Browser
	if err := b.Hold(context.Background(), browser.Work("run:"+j.ID), tab, "sign_in", browser.SignedInCheck{}); err != nil {
		t.Fatal(err)
	}
	wait("paused for the sign-in", func(p LivePicture, has bool) bool { return has && p.Paused == PausedSensitive && len(p.Image) == 0 })
	if err := b.Release(context.Background(), browser.Work("run:"+j.ID), tab, true); err != nil {
		t.Fatal(err)
	}
	// A site the person never has captured: no picture kept or shown, its text still read.
	never := strings.Replace(site.URL, "127.0.0.1", "localhost", 1) + "/"
	view, isErr := callText(t, sess, "browser_view", map[string]any{"url": never})
	if isErr || !strings.Contains(view, "No picture was kept") || !strings.Contains(view, "Quarterly numbers") || evidenceID.MatchString(view) {
		t.Fatalf("browser_view of a site never captured: %q", view)
	}
	wait("paused for a site never captured", func(p LivePicture, has bool) bool { return has && p.Paused == PausedPrivate && len(p.Image) == 0 })
	if shot, isErr := callText(t, sess, "capture_screenshot", map[string]any{"url": never}); !isErr || !strings.Contains(shot, "never has localhost captured") {
		t.Fatalf("capture_screenshot of a site never captured: %q", shot)
	}
	for _, id := range []string{regexp.MustCompile(`Tab (t\d+)`).FindStringSubmatch(view)[1], tab} {
		if text, isErr := callText(t, sess, "browser_close", map[string]any{"tab": id}); isErr {
			t.Fatalf("close %s: %s", id, text)
		}
	}
	if left := e.svc.opts.Browser.Tabs(browser.Work("run:" + j.ID)); len(left) != 0 {
		t.Fatalf("tabs left open: %+v (view said %q)", left, view)
	}
	wait("gone with the tab", func(_ LivePicture, has bool) bool { return !has })

	var seen []Live
	for len(sub.C) > 0 {
		ev := <-sub.C
		if ev.Kind != KindLive {
			continue
		}
		var l Live
		if err := json.Unmarshal(ev.Data, &l); err != nil || ev.Seq != 0 || ev.Subject != j.ID {
			t.Fatalf("event %+v: %v", ev, err)
		}
		seen = append(seen, l)
	}
	if len(seen) < 3 || seen[0].Paused != "" || seen[0].Tab != tab || seen[len(seen)-1].Tab != "" {
		t.Fatalf("live events %+v, want the picture, its pause and its end", seen)
	}
	for _, l := range seen {
		if strings.Contains(l.URL, "abc") || strings.Contains(l.Title, "ghp_") {
			t.Fatalf("an event shows what it must not: %+v", l)
		}
	}
}
