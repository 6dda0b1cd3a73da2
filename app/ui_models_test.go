package app

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/ensemblework/ensemble/engines"
)

// catalogAgent is the stand-in agent with a model catalog, as Claude Code's and Codex's
// detection reports one.
type catalogAgent struct{ scriptedAgent }

func (catalogAgent) Detect(context.Context, string) engines.Detection {
	return engines.Detection{Name: "stand-in", Title: "Stand-in", Installed: true, SignedIn: engines.SignedIn, Version: "1.0",
		Models: []string{"big-1", "small-1"},
		Catalog: []engines.ModelInfo{
			{ID: "big-1", Name: "Big 1", Vendor: "Stand-in Labs", Default: true, Efforts: []string{"low", "medium", "high"}, DefaultEffort: "medium",
				Context: 200_000, LongContext: 1_000_000, Fast: true},
			{ID: "small-1", Name: "Small 1", Vendor: "Stand-in Labs", Context: 128_000},
		}}
}

// TestUIAssignModelMenus: the Assign dialog's menus follow the chosen agent's catalog (spec 003
// §3.2): Thinking with the model's own default named, Context window for a model with two, Fast
// mode for one that has it; a model without them drops the choices; the run gets all four.
func TestUIAssignModelMenus(t *testing.T) {
	needUI(t)
	rt, err := startRuntime(context.Background(), runtimeConfig{DataDir: t.TempDir(), Addr: "127.0.0.1:0",
		Log: slog.New(slog.DiscardHandler), Drivers: map[string]engines.Driver{"stand-in": catalogAgent{}}})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	folder := t.TempDir()
	browser := newBrowser(t)
	ctx, cancel := context.WithTimeout(browser, 90*time.Second)
	defer cancel()
	if err := chromedp.Do(ctx, chromedp.Navigate(rt.SigninURL()), chromedp.WaitEnabled(chromedp.CSS(`#quick-add`)),
		chromedp.SendKeys(chromedp.CSS("#quick-add"), "Tidy the notes\n"),
		chromedp.WaitVisible(chromedp.CSS(`[data-status="todo"] [data-task-id]`)),
		chromedp.Click(chromedp.CSS(`[data-status="todo"] [data-task-id]`)),
		chromedp.WaitVisible(chromedp.CSS(`#give-to-agent`)),
		chromedp.Click(chromedp.CSS(`#give-to-agent`)),
		chromedp.WaitVisible(chromedp.CSS(`#assign-agent`))); err != nil {
		t.Fatalf("open Assign: %v", err)
	}
	for sel, v := range map[string]string{"#assign-agent": "stand-in", "#assign-folder": folder} {
		if err := setInput(ctx, sel, v); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, ctx, "the agent's models in the menu", `[...document.querySelectorAll('#assign-model option')].map((o) => o.value).join(',') === ',big-1,small-1' &&
		document.querySelector('#assign-model option').textContent.includes('Stand-in default')`)
	if err := setSelect(ctx, "#assign-model", "big-1"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "the big model's menus", `document.querySelector('#assign-effort option').textContent === 'Default (Medium)' &&
		!!document.querySelector('#assign-context') && !!document.querySelector('#assign-fast') &&
		document.querySelector('#assign-model-facts').textContent.includes('Stand-in Labs')`)
	if err := setSelect(ctx, "#assign-effort", "high"); err != nil {
		t.Fatal(err)
	}
	if err := setSelect(ctx, "#assign-context", "long"); err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`#assign-fast`))); err != nil {
		t.Fatal(err)
	}
	screenshot(t, ctx, "assign-models-1280.png", 1280)
	screenshot(t, ctx, "assign-models-390.png", 390)
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(1280, 900)); err != nil {
		t.Fatal(err)
	}

	// The small model has no levels, one window and no fast mode: the menus go, and so do the choices.
	if err := setSelect(ctx, "#assign-model", "small-1"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "the small model's menus", `!document.querySelector('#assign-context') && !document.querySelector('#assign-fast')`)
	if err := setSelect(ctx, "#assign-model", "big-1"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "the choices reset", `document.querySelector('#assign-context').value === '' && !document.querySelector('#assign-fast').checked`)
	if err := setSelect(ctx, "#assign-context", "long"); err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`#assign-fast`)), chromedp.Click(chromedp.CSS(`#assign-submit`))); err != nil {
		t.Fatal(err)
	}
	// The dialog closes once the run is made; a click before that lands on the dialog.
	waitFor(t, ctx, "the Assign dialog closed", `!document.querySelector('dialog[open]')`)
	// Settings → Agents names the agent's models.
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`#settings-button`)), chromedp.WaitVisible(chromedp.CSS(`#agents-list`))); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "the models in Settings", `document.querySelector('#agents-list [data-agent="stand-in"] [data-agent-models]')?.textContent === 'Models: Big 1 (default), Small 1'`)
	deadline := time.Now().Add(20 * time.Second)
	for {
		var n int
		rt.store.Reader().QueryRow(`SELECT count(*) FROM job_settings WHERE model = 'big-1' AND context_tier = 'long' AND fast = 1`).Scan(&n)
		if n == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no run with the model, its long window and fast mode")
		}
		time.Sleep(100 * time.Millisecond)
	}
}
