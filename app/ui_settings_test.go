package app

import (
	"context"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"
)

// TestSettingsPage opens Settings from the header: the agents this computer has are listed (claude
// and codex always, installed or not), an editor key is made, shown once and listed, and phone
// access, not set up here, says how to set it up.
func TestSettingsPage(t *testing.T) {
	needUI(t)
	rt := startTestRuntime(t)
	browser := newBrowser(t)
	ctx, cancel := context.WithTimeout(browser, 90*time.Second)
	defer cancel()

	if err := chromedp.Do(ctx, chromedp.Navigate(rt.SigninURL()), chromedp.WaitVisible(chromedp.CSS(`#live[data-state="live"]`))); err != nil {
		t.Fatalf("sign in: %v", err)
	}
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`#settings-button`)), chromedp.WaitVisible(chromedp.CSS(`#settings`))); err != nil {
		t.Fatalf("open Settings: %v", err)
	}
	waitFor(t, ctx, "the route", `location.hash === '#/settings'`)
	waitFor(t, ctx, "the agents list", `!!document.querySelector('#settings [data-agent="claude"]') && !!document.querySelector('#settings [data-agent="codex"]')`)
	// Every agent row says whether it is signed in, or that it is not installed.
	waitFor(t, ctx, "each agent's state", `[...document.querySelectorAll('#settings [data-agent]')].every((r) => r.querySelector('.pill')?.textContent.trim())`)
	// Sign in is offered only to an installed agent that is not signed in.
	waitFor(t, ctx, "sign-in buttons", `[...document.querySelectorAll('#settings [data-agent]')].every((r) =>
		!r.querySelector('.agent-signin') || (r.dataset.installed === 'true' && r.dataset.signedIn !== 'yes'))`)

	// Check again detects afresh.
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`#agents-refresh`))); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "the agents after checking again", `document.querySelector('#agents-refresh').textContent.includes('Check again') && !!document.querySelector('#settings [data-agent="claude"]')`)

	// Phone access is not set up in this runtime: the page says how.
	waitFor(t, ctx, "phones not set up", `document.querySelector('#phones-setup')?.textContent.includes('ensemble pair setup')`)

	// Make an editor key.
	if err := setInput(ctx, "#key-name", "Laptop editor"); err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`#key-write`)), chromedp.Click(chromedp.CSS(`#key-create`))); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "the new key, shown once", `document.querySelector('#new-key-secret')?.textContent.startsWith('ens_')`)
	waitFor(t, ctx, "the key listed", `[...document.querySelectorAll('#keys-list [data-key]')].some((r) =>
		r.textContent.includes('Laptop editor') && r.textContent.includes('make changes'))`)
	waitFor(t, ctx, "the mcp hint", `document.querySelector('#new-key').textContent.includes('ensemble mcp setup')`)

	top := func(sel string) {
		t.Helper()
		if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`(document.querySelector(`+"`"+sel+"`"+`).scrollIntoView({block: 'start'}), true)`)); err != nil {
			t.Fatal(err)
		}
	}
	top("#settings-heading")
	screenshot(t, ctx, "settings-1280.png", 1280)
	top("#settings-heading")
	screenshot(t, ctx, "settings-390.png", 390)
	top("#keys-heading")
	screenshot(t, ctx, "settings-keys-390.png", 390)
	dark := chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		_, err := cdp.Call(ctx, tg, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{
			Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: "dark"}}})
		return err
	})
	if err := chromedp.Do(ctx, dark); err != nil {
		t.Fatal(err)
	}
	top("#settings-heading")
	screenshot(t, ctx, "settings-dark-390.png", 390)

	// A reload on #/settings opens Settings again, without the secret.
	if err := chromedp.Do(ctx, chromedp.Reload(), chromedp.WaitVisible(chromedp.CSS(`#settings`))); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "the key listed after a reload", `!!document.querySelector('#keys-list [data-key]') && !document.querySelector('#new-key-secret')`)
}
