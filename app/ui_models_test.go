package app

import (
	"context"
	"log/slog"
	"testing"

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
	ctx, cancel := context.WithTimeout(browser, browserTestTime)
	defer cancel()
	if err := chromedp.Do(ctx, chromedp.Navigate(rt.SigninURL())); err != nil {
		t.Fatal(err)
	}
	// The quick-add field is disabled until the board has loaded: typing waits for it.
	typeInto(t, ctx, "#quick-add", "Tidy the notes\n")
	press(t, ctx, `[data-status="todo"] [data-task-id]`)
	press(t, ctx, `#give-to-agent`)
	waitFor(t, ctx, "the Assign dialog", `!!document.querySelector('dialog[open] #assign-agent')`)
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
	press(t, ctx, `#assign-fast`)
	waitFor(t, ctx, "fast mode on", `document.querySelector('#assign-fast').checked`)
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
	press(t, ctx, `#assign-fast`)
	waitFor(t, ctx, "fast mode on again", `document.querySelector('#assign-fast').checked`)
	press(t, ctx, `#assign-submit`)
	waitFor(t, ctx, "the run started", `!document.querySelector('dialog[open]') && !!document.querySelector('.run-card[data-job-id]')`)
	// Settings → Agents names the agent's models.
	press(t, ctx, `#settings-button`)
	waitFor(t, ctx, "the models in Settings", `document.querySelector('#agents-list [data-agent="stand-in"] [data-agent-models]')?.textContent === 'Models: Big 1 (default), Small 1'`)
	eventually(t, ctx, "a run with the model, its long window and fast mode", func() bool {
		var n int
		rt.store.Reader().QueryRow(`SELECT count(*) FROM job_settings WHERE model = 'big-1' AND context_tier = 'long' AND fast = 1`).Scan(&n)
		return n == 1
	})
}
