package app

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"
)

// TestNodeUIRoutines makes a node's routines in its settings: a schedule through the form (its
// time zone the browser's, a rule the runtime refuses said in one sentence, then listed in words
// with its next time), a webhook whose address and token are shown once and work, a run now seen
// in the history, and a pause. Pictures at 1280 and 390 px.
func TestNodeUIRoutines(t *testing.T) {
	needUI(t)
	rt := startTestRuntime(t)
	browser := newBrowser(t)
	ctx, cancel := context.WithTimeout(browser, browserTestTime)
	defer cancel()
	c := &client{f: apiFile{URL: rt.URL, Token: readToken(t, rt)}, http: httpClient()}
	var n struct {
		ID string `json:"id"`
	}
	if err := c.do(ctx, "POST", "/api/node/nodes", map[string]any{"name": "Herald", "role": "assistant"}, &n); err != nil {
		t.Fatal(err)
	}
	// The form's time zone is the browser's.
	if _, err := chromedp.Call(ctx, emulation.SetTimezoneOverride, emulation.SetTimezoneOverrideParams{TimezoneID: "Europe/Paris"}); err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(ctx, chromedp.Navigate(rt.SigninURL())); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "the board, live", `document.querySelector('#live')?.dataset.state === 'live'`)
	if err := chromedp.Do(ctx, chromedp.Navigate(rt.URL+"/#/nodes/settings-"+n.ID)); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "no routines yet", `!!document.querySelector('#node-settings #node-routines #routines-empty')`)

	scheduleRoutine(t, ctx)
	id, first := webhookRoutine(t, ctx, rt.URL)

	// Run now, and the run in the schedule's history.
	sched := `.routine[data-kind="schedule"]`
	press(t, ctx, sched+` .routine-run`)
	press(t, ctx, sched+` .routine-history-toggle`)
	waitFor(t, ctx, "the run in its history", `[...document.querySelectorAll('`+sched+` .routine-run-row')].some((r) => r.textContent.includes('Run by you'))`)
	waitFor(t, ctx, "the run among its last runs", `!!document.querySelector('`+sched+` .routine-last .routine-run-badge')`)

	// A new token is shown once too, and differs from the first.
	hook := `.routine[data-routine-id="` + id + `"]`
	press(t, ctx, hook+` .routine-token`)
	waitFor(t, ctx, "the new token, once", `document.querySelector('#routine-secret')?.dataset.routineId === '`+id+`' &&
		document.querySelector('#routine-secret-token')?.textContent.startsWith('rth_') &&
		document.querySelector('#routine-secret-token').textContent !== '`+first+`'`)
	press(t, ctx, `#routine-secret-done`)

	// An event routine, made through the form.
	press(t, ctx, `#routine-new`)
	if err := setSelect(ctx, "#routine-kind", "event"); err != nil {
		t.Fatal(err)
	}
	if err := setInput(ctx, "#routine-instruction", "Tell me when a task is blocked."); err != nil {
		t.Fatal(err)
	}
	if err := setInput(ctx, "#routine-window", "120"); err != nil {
		t.Fatal(err)
	}
	press(t, ctx, `#routine-create`)
	waitFor(t, ctx, "the event routine in words", `document.querySelector('.routine[data-kind="event"] .routine-trigger')?.textContent === 'When a task changes in any space'`)

	// Pausing the webhook: its state and the runtime's.
	press(t, ctx, hook+` .routine-pause`)
	waitFor(t, ctx, "the webhook paused", `document.querySelector('`+hook+`')?.dataset.status === 'paused' &&
		document.querySelector('`+hook+` .routine-state')?.textContent === 'Paused' && !!document.querySelector('`+hook+` .routine-resume')`)
	var got struct {
		Status string `json:"status"`
	}
	if err := c.do(ctx, "GET", "/api/node/routines/"+id, nil, &got); err != nil {
		t.Fatal(err)
	}
	if got.Status != "paused" {
		t.Fatalf("the paused routine is %q in the runtime", got.Status)
	}
	shotOf(t, ctx, "#node-routines", "node-routines-1280.png", 1280)
	shotOf(t, ctx, "#node-routines", "node-routines-390.png", 390)

	// Deleting asks once more.
	press(t, ctx, hook+` .routine-delete`)
	press(t, ctx, hook+` .routine-delete-yes`)
	waitFor(t, ctx, "the webhook deleted", `!document.querySelector('`+hook+`') && document.querySelectorAll('.routine').length === 2`)
}

// scheduleRoutine makes a weekday-morning routine through the form: an empty instruction and an
// hour the runtime refuses each say so in one sentence first.
func scheduleRoutine(t *testing.T, ctx context.Context) {
	t.Helper()
	press(t, ctx, `#routine-new`)
	waitFor(t, ctx, "the browser's time zone", `document.querySelector('#routine-timezone')?.value === 'Europe/Paris'`)
	press(t, ctx, `#routine-create`)
	waitFor(t, ctx, "an instruction asked for", `document.querySelector('#routine-form-error')?.textContent.includes('Say what the routine does')`)
	if err := setInput(ctx, "#routine-instruction", "Sum up my open tasks and what is due today."); err != nil {
		t.Fatal(err)
	}
	if err := setInput(ctx, "#routine-title", "Morning summary"); err != nil {
		t.Fatal(err)
	}
	if err := setInput(ctx, "#routine-cron", "0 25 * * 1-5"); err != nil {
		t.Fatal(err)
	}
	press(t, ctx, `#routine-create`)
	waitFor(t, ctx, "the runtime's sentence", `document.querySelector('#routine-form-error')?.textContent.includes('not a five-field cron schedule')`)
	if err := setInput(ctx, "#routine-cron", "0 9 * * 1-5"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "the rule in words as typed, the sentence gone", `document.querySelector('#routine-cron-words')?.textContent.trim() === 'Every weekday at 09:00 (Europe/Paris)' &&
		!document.querySelector('#routine-form-error')`)
	shotOf(t, ctx, "#routine-form", "node-routine-new-390.png", 390)
	shotOf(t, ctx, "#routine-form", "node-routine-new-1280.png", 1280)
	press(t, ctx, `#routine-create`)
	sched := `.routine[data-kind="schedule"]`
	waitFor(t, ctx, "the schedule listed in words", `!document.querySelector('#routine-form') &&
		document.querySelector('`+sched+` .routine-title')?.textContent === 'Morning summary' &&
		document.querySelector('`+sched+` .routine-trigger')?.textContent === 'Every weekday at 09:00 (Europe/Paris)' &&
		document.querySelector('`+sched+` .routine-meta')?.textContent.includes('Next:') &&
		document.querySelector('`+sched+` .routine-state')?.textContent === 'Active'`)
}

// webhookRoutine makes a webhook routine and returns its id and token: its address and token are
// shown once (gone after Done and a reload), and a call with them is taken.
func webhookRoutine(t *testing.T, ctx context.Context, base string) (id, token string) {
	t.Helper()
	press(t, ctx, `#routine-new`)
	if err := setSelect(ctx, "#routine-kind", "webhook"); err != nil {
		t.Fatal(err)
	}
	if err := setInput(ctx, "#routine-instruction", "Triage the new issue: label it and say who should look."); err != nil {
		t.Fatal(err)
	}
	press(t, ctx, `#routine-create`)
	waitFor(t, ctx, "the token, once", `document.querySelector('#routine-secret-token')?.textContent.startsWith('rth_') &&
		document.querySelector('#routine-secret')?.textContent.includes('will not be shown again') &&
		document.querySelector('.routine[data-kind="webhook"] .routine-trigger')?.textContent === 'When called by a webhook'`)
	id, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector('#routine-secret').dataset.routineId`))
	if err != nil {
		t.Fatal(err)
	}
	url, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector('#routine-secret-url').textContent`))
	if err != nil {
		t.Fatal(err)
	}
	token, err = chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector('#routine-secret-token').textContent`))
	if err != nil {
		t.Fatal(err)
	}
	if url != strings.TrimRight(base, "/")+"/api/node/hooks/routines/"+id {
		t.Fatalf("the webhook's address is %q", url)
	}
	shotOf(t, ctx, "#routine-secret", "node-routine-token-390.png", 390)
	shotOf(t, ctx, "#routine-secret", "node-routine-token-1280.png", 1280)

	req, err := http.NewRequestWithContext(ctx, "POST", url, strings.NewReader(`{"action":"opened"}`))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusAccepted {
		t.Fatalf("the webhook called with the shown token answered %d, want 202", res.StatusCode)
	}

	press(t, ctx, `#routine-secret-done`)
	if err := chromedp.Do(ctx, chromedp.Reload()); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "both routines again, no token", `document.querySelectorAll('#routine-list .routine').length === 2 &&
		!document.querySelector('#routine-secret') && !document.body.textContent.includes('`+token+`')`)
	return id, token
}

// shotOf takes a picture at width with sel scrolled to the top of its pane: the page is laid out
// at that width first, as where sel sits depends on it.
func shotOf(t *testing.T, ctx context.Context, sel, name string, width int64) {
	t.Helper()
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(width, 900)); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "the page at its width", `innerWidth === `+strconv.FormatInt(width, 10))
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`(() => { document.querySelector('`+sel+`')?.scrollIntoView({ block: 'start' }); return true; })()`)); err != nil {
		t.Fatal(err)
	}
	// On this long settings pane Chromium's first capture beyond the viewport after a resize or a
	// scroll comes out 15 px narrow and 2 px tall (a root scrollbar only the capture sees; the page
	// itself measures 390 wide with nothing over); the next one is the page as it is.
	if _, err := chromedp.Run(ctx, chromedp.FullScreenshot(100)); err != nil {
		t.Fatal(err)
	}
	screenshot(t, ctx, name, width)
}
