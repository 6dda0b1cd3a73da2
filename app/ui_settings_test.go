package app

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strings"
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

// TestSettingsPageSignIn finds an installed agent that is not signed in (a stand-in codex in the
// person's ~/bin, put on PATH by their ~/.profile as a login shell reads it), clicks its "Sign in"
// and sees the terminal open running its sign-in command, `codex login`.
func TestSettingsPageSignIn(t *testing.T) {
	needUI(t)
	if runtime.GOOS == "windows" {
		t.Skip("terminals are not supported on Windows yet")
	}
	home := t.TempDir()
	bin := filepath.Join(home, "bin")
	standIn := `#!/bin/sh
case "$1 $2" in
"--version ") echo "codex-cli 0.0.1-standin" ;;
"login status") echo "Not logged in"; exit 1 ;;
"login ") echo "Stand-in sign-in for codex: open the link to sign in."; read answer ;;
*) echo "stand-in codex: $*"; exit 2 ;;
esac
`
	if err := os.MkdirAll(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(bin, "codex"), []byte(standIn), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, ".profile"), []byte(`PATH="$HOME/bin:$PATH"; export PATH`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("HOME", home)
	t.Setenv("SHELL", "/bin/sh")
	t.Setenv("CODEX_HOME", "")
	rt := startTestRuntime(t)
	browser := newBrowser(t)
	ctx, cancel := context.WithTimeout(browser, 90*time.Second)
	defer cancel()

	if err := chromedp.Do(ctx, chromedp.Navigate(rt.SigninURL()), chromedp.WaitVisible(chromedp.CSS(`#live[data-state="live"]`)),
		chromedp.Click(chromedp.CSS(`#settings-button`)), chromedp.WaitVisible(chromedp.CSS(`#settings`))); err != nil {
		t.Fatalf("open Settings: %v", err)
	}
	row := `document.querySelector('#settings [data-agent="codex"]')`
	waitFor(t, ctx, "codex installed and not signed in, with Sign in", row+`?.dataset.installed === 'true' && `+row+`.dataset.signedIn === 'no' && !!`+row+`.querySelector('.agent-signin')`)
	if v, _ := chromedp.Run(ctx, chromedp.Evaluate[string](row+`.querySelector('.row-title').textContent`)); !strings.Contains(v, "0.0.1-standin") {
		t.Errorf("the codex row shows %q, not the stand-in's version", v)
	}
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`#settings [data-agent="codex"] .agent-signin`)), chromedp.WaitVisible(chromedp.CSS(`#terminal .xterm-rows`))); err != nil {
		t.Fatalf("Sign in: %v", err)
	}
	waitFor(t, ctx, "the sign-in running in the terminal", `document.querySelector('.term-panel')?.dataset.state === 'live' &&
		document.querySelector('#terminal .xterm-rows').textContent.includes('Stand-in sign-in for codex')`)
	waitFor(t, ctx, "the panel names the command", `document.querySelector('#term-heading').textContent.trim() === 'Sign in: codex login'`)
	terms := rt.terms.List()
	if len(terms) != 1 || terms[0].Command != "codex login" {
		t.Fatalf("terminals open: %+v, want one running codex login", terms)
	}
	screenshot(t, ctx, "settings-signin-1280.png", 1280)
	screenshot(t, ctx, "settings-signin-390.png", 390)
}
