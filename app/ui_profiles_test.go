package app

import (
	"context"
	"encoding/json"
	"log/slog"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/ensemblework/ensemble/engines"
)

// setSelect chooses a value in a select as a person would (its change event fires), once the
// select is in the page, enabled, and offers the value.
func setSelect(ctx context.Context, sel, value string) error {
	s, _ := json.Marshal(sel)
	v, _ := json.Marshal(value)
	_, err := chromedp.Run(ctx, chromedp.Poll[bool](`(() => {
		const el = document.querySelector(`+string(s)+`);
		if (!el || el.disabled || ![...el.options].some((o) => o.value === `+string(v)+`)) return false;
		el.value = `+string(v)+`;
		el.dispatchEvent(new Event('change', { bubbles: true }));
		return true;
	})()`, pollFor(ctx)...))
	return err
}

// TestUIProfilesInSettingsAndAssign makes a run profile in Settings → Run profiles and stars it;
// the Assign dialog on a task then starts from it with its fields filled in, and a run started
// with one field changed gets the profile's settings plus that change.
func TestUIProfilesInSettingsAndAssign(t *testing.T) {
	needUI(t)
	rt, err := startRuntime(context.Background(), runtimeConfig{DataDir: t.TempDir(), Addr: "127.0.0.1:0",
		Log: slog.New(slog.DiscardHandler), Drivers: map[string]engines.Driver{"stand-in": scriptedAgent{}}})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	folder := t.TempDir()

	browser := newBrowser(t)
	ctx, cancel := context.WithTimeout(browser, browserTestTime)
	defer cancel()
	if err := chromedp.Do(ctx, chromedp.Navigate(rt.SigninURL())); err != nil {
		t.Fatalf("sign in: %v", err)
	}
	waitFor(t, ctx, "the board, live", `document.querySelector('#live')?.dataset.state === 'live'`)
	status, err := chromedp.Run(ctx, chromedp.Evaluate[float64](`fetch('/s/' + localStorage.getItem('ensemble.session') + '/api/agent/profiles').then((r) => r.status)`, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatal(err)
	}
	if status != 200 {
		t.Fatalf("GET /api/agent/profiles answered %v, want 200", status)
	}

	// Settings → Run profiles: a new profile for the stand-in agent.
	press(t, ctx, `#settings-button`)
	waitShown(t, ctx, `#profiles-settings`)
	waitFor(t, ctx, "no profiles yet", `!!document.querySelector('#profiles-empty')`)
	press(t, ctx, `#profile-new`)
	waitShown(t, ctx, `#profile-form`)
	for sel, v := range map[string]string{"#profile-name": "Careful stand-in", "#profile-agent": "stand-in", "#profile-folder": folder,
		"#profile-model": "fake-model", "#profile-effort": "high", "#profile-minutes": "30"} {
		if err := setInput(ctx, sel, v); err != nil {
			t.Fatalf("filling %s: %v", sel, err)
		}
	}
	if err := setSelect(ctx, "#profile-mode", "review"); err != nil {
		t.Fatal(err)
	}
	press(t, ctx, `#profile-internet`)
	press(t, ctx, `#profile-save`)
	waitFor(t, ctx, "the profile listed", `!document.querySelector('#profile-form') &&
		[...document.querySelectorAll('#profiles-list [data-profile-id]')].some((r) => r.textContent.includes('Careful stand-in') && r.textContent.includes('Review after'))`)
	waitFor(t, ctx, "not starred yet", `document.querySelector('#profiles-list [data-profile-id]').dataset.starred === 'false'`)

	// Star it: the default.
	press(t, ctx, `#profiles-list [data-profile-id] .profile-star`)
	waitFor(t, ctx, "the profile starred", `document.querySelector('#profiles-list [data-profile-id]').dataset.starred === 'true' &&
		document.querySelector('#profiles-list [data-profile-id] .pill')?.textContent.includes('Default')`)
	id, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector('#profiles-list [data-profile-id]').dataset.profileId`))
	if err != nil || id == "" {
		t.Fatalf("the profile's id: %q %v", id, err)
	}
	// Editing it shows what was saved.
	press(t, ctx, `#profiles-list .profile-edit`)
	waitShown(t, ctx, `#profile-form`)
	waitFor(t, ctx, "the edit form filled in", `document.querySelector('#profile-name').value === 'Careful stand-in' &&
		document.querySelector('#profile-mode').value === 'review' && document.querySelector('#profile-minutes').value === '30' &&
		!document.querySelector('#profile-internet').checked`)
	shot := func(name string, width int64) {
		if err := chromedp.Do(ctx, chromedp.EmulateViewport(width, 900), chromedp.ScrollIntoView(chromedp.CSS(`#profiles-settings`))); err != nil {
			t.Fatal(err)
		}
		screenshot(t, ctx, name, width)
	}
	shot("profiles-form-1280.png", 1280)
	shot("profiles-form-390.png", 390)
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(1280, 900)); err != nil {
		t.Fatal(err)
	}
	press(t, ctx, `#profile-form button[type="button"]`)
	waitFor(t, ctx, "the form closed", `!document.querySelector('#profile-form') && !!document.querySelector('#profile-new')`)
	shot("profiles-settings-1280.png", 1280)
	shot("profiles-settings-390.png", 390)
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(1280, 900)); err != nil {
		t.Fatal(err)
	}

	// A task's Assign dialog starts from the starred profile, its fields filled in.
	if err := chromedp.Do(ctx, chromedp.Navigate(rt.URL+"/#/")); err != nil {
		t.Fatalf("opening the assign dialog: %v", err)
	}
	waitShown(t, ctx, `#quick-add`)
	typeInto(t, ctx, "#quick-add", "Make a file\n")
	press(t, ctx, `[data-status="todo"] [data-task-id]`)
	press(t, ctx, `#give-to-agent`)
	waitShown(t, ctx, `#assign-agent`)
	idJS, _ := json.Marshal(id)
	folderJS, _ := json.Marshal(folder)
	waitFor(t, ctx, "the starred profile preselected with its fields", `document.querySelector('#assign-profile')?.value === `+string(idJS)+` &&
		document.querySelector('#assign-agent').value === 'stand-in' && document.querySelector('#assign-folder').value === `+string(folderJS)+` &&
		document.querySelector('#assign-mode').value === 'review' && document.querySelector('#assign-model').value === 'fake-model' &&
		document.querySelector('#assign-effort').value === 'high' && document.querySelector('#assign-minutes').value === '30' &&
		!document.querySelector('#assign-internet').checked && document.querySelector('#assign-sandbox').checked`)
	waitFor(t, ctx, "nothing changed yet", `document.querySelector('#assign-profile-changes').textContent.includes('As the profile has it')`)
	screenshot(t, ctx, "assign-profile-1280.png", 1280)
	screenshot(t, ctx, "assign-profile-390.png", 390)
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(1280, 900)); err != nil {
		t.Fatal(err)
	}

	// Quick settings and back: the fields follow the choice.
	if err := setSelect(ctx, "#assign-profile", ""); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "quick settings", `document.querySelector('#assign-mode').value === 'ask' && document.querySelector('#assign-internet').checked`)
	if err := setSelect(ctx, "#assign-profile", id); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "the profile again", `document.querySelector('#assign-mode').value === 'review' && !document.querySelector('#assign-internet').checked`)

	// One field changed for this run; the run gets the profile's settings plus that change.
	if err := setInput(ctx, "#assign-turns", "7"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "the change named", `document.querySelector('#assign-profile-changes').textContent.includes('turns')`)

	// Save as profile: the settings as they are now become a profile, chosen in the picker.
	press(t, ctx, `#assign-save-as`)
	waitShown(t, ctx, `#assign-profile-name`)
	if err := setInput(ctx, "#assign-profile-name", "Seven turns"); err != nil {
		t.Fatal(err)
	}
	press(t, ctx, `#assign-profile-save`)
	waitFor(t, ctx, "the new profile chosen", `!document.querySelector('#assign-profile-name') &&
		document.querySelector('#assign-profile').selectedOptions[0].textContent.trim() === 'Seven turns' &&
		document.querySelector('#assign-profile-changes').textContent.includes('As the profile has it') &&
		document.querySelector('#assign-turns').value === '7'`)
	press(t, ctx, `#assign-submit`)
	waitFor(t, ctx, "the run's card", `!!document.querySelector('.run-card[data-job-id]') && !document.querySelector('dialog[open]')`)
	var job struct {
		Agent    string `json:"agent"`
		Folder   string `json:"folder"`
		Settings struct {
			Mode       string `json:"mode"`
			Internet   bool   `json:"internet"`
			MaxMinutes int    `json:"maxMinutes"`
			MaxTurns   int    `json:"maxTurns"`
			Model      string `json:"model"`
			Effort     string `json:"effort"`
		} `json:"settings"`
	}
	raw, err := chromedp.Run(ctx, chromedp.Evaluate[string](`fetch('/s/' + localStorage.getItem('ensemble.session') + '/api/agent/jobs/' + document.querySelector('.run-card[data-job-id]').dataset.jobId).then((r) => r.text())`, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(raw), &job); err != nil {
		t.Fatalf("the job: %v\n%s", err, raw)
	}
	s := job.Settings
	if job.Agent != "stand-in" || job.Folder != folder || s.Mode != "review" || s.Internet || s.MaxMinutes != 30 || s.MaxTurns != 7 || s.Model != "fake-model" || s.Effort != "high" {
		t.Errorf("the run's settings are not the profile's plus the change: %s", raw)
	}
}
