package app

import (
	"context"
	"log/slog"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/ensemblework/ensemble/engines"
)

// signedOutClaude is a stand-in detected as Claude Code, installed and signed out.
type signedOutClaude struct{ scriptedAgent }

func (signedOutClaude) Name() string { return "claude" }

func (signedOutClaude) Detect(context.Context, string) engines.Detection {
	return engines.Detection{Name: "claude", Title: "Claude Code", Installed: true, SignedIn: engines.SignedOut, Version: "2.1.197",
		Login: "claude /login", Models: []string{"sonnet", "opus"}}
}

// TestUIAssistantOnPlan: Settings → Assistant offers the person's Claude Code plan when Claude Code
// is on this computer, says it is signed out with its login command, asks for no key or base URL,
// takes an empty model as the agent's default, and saves it as the provider, with tasks unticked
// in what the assistant may change.
func TestUIAssistantOnPlan(t *testing.T) {
	needUI(t)
	rt, err := startRuntime(context.Background(), runtimeConfig{DataDir: t.TempDir(), Addr: "127.0.0.1:0",
		Log: slog.New(slog.DiscardHandler), Drivers: map[string]engines.Driver{"claude": signedOutClaude{}}})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	browser := newBrowser(t)
	ctx, cancel := context.WithTimeout(browser, browserTestTime)
	defer cancel()
	if err := chromedp.Do(ctx, chromedp.Navigate(rt.SigninURL())); err != nil {
		t.Fatalf("open Settings: %v", err)
	}
	press(t, ctx, `#settings-button`)
	waitShown(t, ctx, `#as-provider`)
	waitFor(t, ctx, "the plan offered", `[...document.querySelectorAll('#as-provider option')].some((o) => o.value === 'claude-code')`)
	if err := setSelect(ctx, "#as-provider", "claude-code"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "the plan's state", `document.querySelector('#as-plan')?.dataset.signedIn === 'no' &&
		document.querySelector('#as-plan .plan-login')?.textContent === 'claude /login' && !document.querySelector('#as-baseUrl') &&
		[...document.querySelectorAll('#as-effort option')].map((o) => o.value).includes('xhigh')`)
	// What it may change: tasks unticked.
	press(t, ctx, `#as-areas [data-area="tasks"] input`)
	if err := chromedp.Do(ctx, chromedp.ScrollIntoView(chromedp.CSS(`#assistant-form`))); err != nil {
		t.Fatal(err)
	}
	screenshot(t, ctx, "assistant-plan-1280.png", 1280)
	screenshot(t, ctx, "assistant-plan-390.png", 390)
	wide, err := chromedp.Run(ctx, chromedp.Evaluate[string](`[...document.querySelectorAll('body *')].filter((e) => e.getBoundingClientRect().right > document.documentElement.clientWidth + 1).slice(0, 8).map((e) => e.tagName + '#' + e.id + '.' + e.className + ' ' + Math.round(e.getBoundingClientRect().right)).join('\n')`))
	if err != nil || wide != "" {
		t.Errorf("at 390 px these reach past the screen's edge (%v):\n%s", err, wide)
	}
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(1280, 900)); err != nil {
		t.Fatal(err)
	}
	press(t, ctx, `#assistant-save`)
	var provider, areas string
	eventually(t, ctx, "the plan and the write areas saved", func() bool {
		rt.store.Reader().QueryRow(`SELECT value FROM assistant_settings WHERE key = 'provider'`).Scan(&provider)
		rt.store.Reader().QueryRow(`SELECT value FROM assistant_settings WHERE key = 'allowedWriteAreas'`).Scan(&areas)
		return provider == "claude-code" && areas == `["pages","projects","people","repos","agents","workflows"]`
	})
}
