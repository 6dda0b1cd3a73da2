package app

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// The browser tests run on a loaded two-core machine beside other tests, so nothing in them waits
// a fixed time: every step waits for the condition it needs (the element shown and enabled, the
// record saved), for as long as the test's context allows. chromedp.Poll stops after 30 s unless
// told otherwise; pollFor gives it the context's deadline instead.

// browserTestTime bounds a browser test: generous, as the machine may be loaded; it ends a hung
// test, it never measures one.
const browserTestTime = 4 * time.Minute

// newTab opens another tab of the browser, started on a context that lives as long as the test
// (as newBrowser's does), so a test's deadline does not close it before a failure shows its page.
func newTab(t *testing.T, browser context.Context) context.Context {
	t.Helper()
	tab, cancel := chromedp.NewContext(browser)
	t.Cleanup(cancel)
	if err := chromedp.Do(tab); err != nil {
		t.Fatalf("open a tab: %v", err)
	}
	return tab
}

// pollFor is chromedp.Poll's options for a condition that may take as long as ctx allows.
func pollFor(ctx context.Context) []chromedp.PollOption {
	opts := []chromedp.PollOption{chromedp.WithPollingInterval(50 * time.Millisecond)}
	if d, ok := ctx.Deadline(); ok {
		opts = append(opts, chromedp.WithPollingTimeout(time.Until(d)))
	}
	return opts
}

// clickable is a JavaScript function of an element: whether a person could press it now (in the
// page, shown, not disabled, not inside a closed <details> or an inert part).
const clickable = `(el) => !!el && !el.disabled && !el.closest('[inert]') && el.getClientRects().length > 0 &&
	el.checkVisibility({ visibilityProperty: true })`

// press clicks the first element sel matches that a person could press, as soon as there is one.
func press(t *testing.T, ctx context.Context, sel string) {
	t.Helper()
	s, _ := json.Marshal(sel)
	js := `(() => {
		const ok = ` + clickable + `;
		const el = [...document.querySelectorAll(` + string(s) + `)].find(ok);
		if (!el) return false;
		el.scrollIntoView({ block: 'nearest', inline: 'nearest' });
		el.click();
		return true;
	})()`
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](js, pollFor(ctx)...)); err != nil {
		t.Fatalf("press %s: %v\n%s", sel, err, pageNow(t, ctx))
	}
}

// typeInto types text (a trailing "\n" presses Enter) into a field once it is shown and enabled:
// a field disabled while the page loads is not focusable, and typing into it fails.
func typeInto(t *testing.T, ctx context.Context, sel, text string) {
	t.Helper()
	s, _ := json.Marshal(sel)
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](`(`+clickable+`)(document.querySelector(`+string(s)+`))`, pollFor(ctx)...)); err != nil {
		t.Fatalf("%s never took typing: %v", sel, err)
	}
	if err := chromedp.Do(ctx, chromedp.SendKeys(chromedp.CSS(sel), text)); err != nil {
		t.Fatalf("type into %s: %v", sel, err)
	}
}

// eventually waits, as long as ctx allows, for a condition outside the page (the database, the
// API) to hold.
func eventually(t *testing.T, ctx context.Context, what string, cond func() bool) {
	t.Helper()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		select {
		case <-ctx.Done():
			t.Fatalf("%s: %v", what, context.Cause(ctx))
		case <-tick.C:
		}
	}
}

// pressToast presses the button of the newest toast whose text has the words.
func pressToast(t *testing.T, ctx context.Context, words string) {
	t.Helper()
	w, _ := json.Marshal(words)
	js := `(() => {
		const toast = [...document.querySelectorAll('#toast .toast')].reverse().find((e) => e.textContent.includes(` + string(w) + `));
		const btn = toast?.querySelector('.btn');
		if (!btn) return false;
		btn.click();
		return true;
	})()`
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](js, pollFor(ctx)...)); err != nil {
		t.Fatalf("no toast with %q and a button: %v", words, err)
	}
}

// pageNow is what a failing test shows of its page: the address, the text, and a screenshot left
// in the screenshot folder. It has its own few seconds, as the test's context may have run out.
func pageNow(t *testing.T, ctx context.Context) string {
	t.Helper()
	c, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	url, _ := chromedp.Run(c, chromedp.Evaluate[string](`location.href`))
	text, _ := chromedp.Run(c, chromedp.Evaluate[string](`document.body.innerText.slice(0, 3000)`))
	shot := ""
	if png, err := chromedp.Run(c, chromedp.FullScreenshot(90)); err == nil {
		shot = filepath.Join(screenshotDir(t), "failed-"+strings.ReplaceAll(t.Name(), "/", "-")+".png")
		if os.WriteFile(shot, png, 0o644) != nil {
			shot = ""
		}
	}
	return "page " + url + " (screenshot " + shot + "):\n" + text
}

// shown is a JavaScript condition: sel matches an element a person could see and press.
func shown(sel string) string {
	s, _ := json.Marshal(sel)
	return `(` + clickable + `)(document.querySelector(` + string(s) + `))`
}

// waitShown waits until sel matches an element a person could see and press.
func waitShown(t *testing.T, ctx context.Context, sel string) {
	t.Helper()
	waitFor(t, ctx, sel+" shown", shown(sel))
}
