package app

import (
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"testing"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"

	"github.com/ensemblework/ensemble/engines"
)

// setInput types a value into a form field as a person would (the field's input event fires),
// once the field is in the page and enabled.
func setInput(ctx context.Context, sel, value string) error {
	s, _ := json.Marshal(sel)
	v, _ := json.Marshal(value)
	_, err := chromedp.Run(ctx, chromedp.Poll[bool](`(() => {
		const el = document.querySelector(`+string(s)+`);
		if (!el || el.disabled) return false;
		el.focus();
		el.value = `+string(v)+`;
		el.dispatchEvent(new Event('input', { bubbles: true }));
		return true;
	})()`, pollFor(ctx)...))
	return err
}

// waitFor polls a JavaScript condition in a page until it holds, as long as ctx allows.
func waitFor(t *testing.T, ctx context.Context, what, cond string) {
	t.Helper()
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](cond, pollFor(ctx)...)); err != nil {
		t.Fatalf("%s: %v\n%s", what, err, pageNow(t, ctx))
	}
}

// TestUIRunOnTaskPageWithNeedsMe gives a task to an agent from its page, watches the run's trace
// arrive live, answers its question on Needs me in one tab and sees it settle in another, and sees
// the run end done.
func TestUIRunOnTaskPageWithNeedsMe(t *testing.T) {
	needUI(t)
	data := t.TempDir()
	rt, err := startRuntime(context.Background(), runtimeConfig{DataDir: data, Addr: "127.0.0.1:0",
		Log: slog.New(slog.DiscardHandler), Drivers: map[string]engines.Driver{"stand-in": scriptedAgent{}}})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	folder := t.TempDir()

	first := newBrowser(t)
	ctx, cancel := context.WithTimeout(first, browserTestTime)
	defer cancel()
	if err := chromedp.Do(ctx, chromedp.Navigate(rt.SigninURL())); err != nil {
		t.Fatalf("first page: %v", err)
	}
	waitFor(t, ctx, "the board, live", `document.querySelector('#live')?.dataset.state === 'live'`)
	waitFor(t, ctx, "the Needs me badge starts at 0", `document.getElementById('needs-count')?.textContent === '0' && document.title === 'Ensemble'`)

	// A task, opened on its own page, given to the stand-in agent through the dialog.
	typeInto(t, ctx, "#quick-add", "Make a file\n")
	press(t, ctx, `[data-status="todo"] [data-task-id]`)
	press(t, ctx, `#give-to-agent`)
	waitShown(t, ctx, `#assign-agent`)
	for sel, v := range map[string]string{"#assign-agent": "stand-in", "#assign-folder": folder} {
		if err := setInput(ctx, sel, v); err != nil {
			t.Fatalf("filling %s: %v", sel, err)
		}
	}
	press(t, ctx, `#assign-submit`)
	waitFor(t, ctx, "the run's card", `!!document.querySelector('.run-card[data-job-id]') && !document.querySelector('dialog[open]')`)

	// The trace arrives live: the agent's message, and the permission it asks for.
	waitFor(t, ctx, "the agent's message in the trace",
		`[...document.querySelectorAll('.trace-row[data-kind="run.message"]')].some(r => r.textContent.includes('I will make the file.'))`)
	waitFor(t, ctx, "the ask in the trace", `!!document.querySelector('.trace-row[data-kind="run.decision"][data-decision="ask"]')`)
	waitFor(t, ctx, "the Needs me badge at 1", `document.getElementById('needs-count')?.textContent === '1' && document.title === '(1) Ensemble'`)

	// A second tab sees the same decision waiting.
	second := newTab(t, first)
	ctx2, cancel3 := context.WithTimeout(second, browserTestTime)
	defer cancel3()
	if err := chromedp.Do(ctx2, chromedp.Navigate(rt.URL+"/")); err != nil {
		t.Fatalf("second page: %v", err)
	}
	waitFor(t, ctx2, "the second page, live", `document.querySelector('#live')?.dataset.state === 'live'`)
	waitFor(t, ctx2, "the second page's badge at 1", `document.getElementById('needs-count')?.textContent === '1'`)
	press(t, ctx2, `#needs-button`)
	waitShown(t, ctx2, `[data-need-id] [data-option="0"]`)

	// Needs me in the first page: the permission, what it would run, the recommended answer.
	press(t, ctx, `#needs-button`)
	waitShown(t, ctx, `[data-need-id] [data-option="0"]`)
	waitFor(t, ctx, "the decision names the call", `document.querySelector('[data-need-id]').textContent.includes('touch made.txt')`)
	waitFor(t, ctx, "three options, one recommended", `document.querySelectorAll('[data-need-id] [data-option]').length === 3 && document.querySelectorAll('[data-need-id] [data-option].primary').length === 1`)
	screenshot(t, ctx, "needs-1280.png", 1280)
	screenshot(t, ctx, "needs-390.png", 390)
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(1280, 900)); err != nil {
		t.Fatal(err)
	}

	// Answer in the first page; the second settles live, saying where it was answered.
	press(t, ctx, `[data-need-id] [data-option="0"]`)
	waitFor(t, ctx, "the first page's badge at 0", `document.getElementById('needs-count')?.textContent === '0' && document.title === 'Ensemble'`)
	waitFor(t, ctx2, "the second page's note", `[...document.querySelectorAll('.need-note')].some(n => n.textContent.includes('Answered in another window'))`)
	waitFor(t, ctx2, "the second page's badge at 0", `document.getElementById('needs-count')?.textContent === '0' && document.title === 'Ensemble'`)
	waitFor(t, ctx2, "the settled decision leaves the second page", `!document.querySelector('[data-need-id]')`)

	// Back on the task's page, the run goes on and ends done; the trace shows the tool call and the end.
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`(history.back(), true)`)); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "the run ends done", `document.querySelector('.run-card[data-job-id]')?.dataset.status === 'done'`)
	waitFor(t, ctx, "the answer in the trace", `!!document.querySelector('.trace-row[data-kind="run.decision"][data-decision="allow"]')`)
	waitFor(t, ctx, "the tool call in the trace", `!!document.querySelector('.trace-row.tool[data-kind="run.tool_end"][data-state="ok"]')`)
	waitFor(t, ctx, "the end in the trace", `!!document.querySelector('.trace-row[data-kind="run.ended"][data-status="done"]')`)
	if _, err := os.Stat(filepath.Join(folder, "made.txt")); err != nil {
		t.Errorf("the allowed command did not run: %v", err)
	}
	// A tool row opens to show its input and output.
	press(t, ctx, `.trace-row.tool summary`)
	waitFor(t, ctx, "the tool row's input and output", `document.querySelector('.trace-row.tool details').open && document.querySelector('.trace-row.tool .tool-body').textContent.includes('(no output)')`)
	// The step names what confined it (the run's sandbox is on by default).
	waitFor(t, ctx, "the step's sandbox", `document.querySelector('.trace-row.tool [data-sandbox="stand-in"]')?.textContent === 'sandboxed' && document.querySelector('.trace-row.tool .tool-sandbox-note').textContent.includes('own OS sandbox')`)
	screenshot(t, ctx, "task-run-1280.png", 1280)
	screenshot(t, ctx, "task-run-390.png", 390)
	// The same page in dark.
	dark := chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		_, err := cdp.Call(ctx, tg, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{
			Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: "dark"}}})
		return err
	})
	if err := chromedp.Do(ctx, dark); err != nil {
		t.Fatal(err)
	}
	screenshot(t, ctx, "task-run-dark-1280.png", 1280)

	// A screenshot the run's browser tools held (it showed a key) waits above the trace for the
	// person's preview; Release makes it the run's evidence, and the trace says so.
	light := chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		_, err := cdp.Call(ctx, tg, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{})
		return err
	})
	if err := chromedp.Do(ctx, light); err != nil {
		t.Fatal(err)
	}
	jobID, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector('.run-card[data-job-id]').dataset.jobId`))
	if err != nil {
		t.Fatal(err)
	}
	held := filepath.Join(data, "evidence", jobID, "held", "evd_00112233445566aa-screenshot-20261203-120000.png")
	if err := os.MkdirAll(filepath.Dir(held), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(held, tinyPNG(t), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(ctx, chromedp.Reload()); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "the held screenshot above the trace", `!!document.querySelector('[data-testid="run-held"] [data-file-id="evd_00112233445566aa"] img')`)
	waitFor(t, ctx, "the held picture loads", `document.querySelector('[data-testid="run-held"] img').naturalWidth > 0`)
	screenshot(t, ctx, "run-held-1280.png", 1280)
	screenshot(t, ctx, "run-held-390.png", 390)
	press(t, ctx, `[data-testid="run-held"] .held-release`)
	waitFor(t, ctx, "the held box leaves once released", `!document.querySelector('[data-testid="run-held"]')`)
	waitFor(t, ctx, "the release in the trace", `[...document.querySelectorAll('.trace-row[data-kind="run.evidence"]')].some(r => r.textContent.includes('Released by the person'))`)
	if _, err := os.Stat(filepath.Join(data, "evidence", jobID, "evd_00112233445566aa-screenshot-20261203-120000.png")); err != nil {
		t.Fatalf("the released screenshot is not the run's evidence: %v", err)
	}
}
