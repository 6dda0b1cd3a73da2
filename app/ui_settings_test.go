package app

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"
)

// TestUISettingsPage opens Settings from the header: the agents this computer has are listed (claude
// and codex always, installed or not), an editor key is made, shown once and listed, and phone
// access, not set up here, says how to set it up.
func TestUISettingsPage(t *testing.T) {
	needUI(t)
	rt := startTestRuntime(t)
	browser := newBrowser(t)
	ctx, cancel := context.WithTimeout(browser, browserTestTime)
	defer cancel()

	if err := chromedp.Do(ctx, chromedp.Navigate(rt.SigninURL())); err != nil {
		t.Fatalf("sign in: %v", err)
	}
	waitFor(t, ctx, "the board, live", `document.querySelector('#live')?.dataset.state === 'live'`)
	press(t, ctx, `#settings-button`)
	waitShown(t, ctx, `#settings`)
	waitFor(t, ctx, "the route", `location.hash === '#/settings'`)
	waitFor(t, ctx, "the agents list", `!!document.querySelector('#settings [data-agent="claude"]') && !!document.querySelector('#settings [data-agent="codex"]')`)
	// Every agent row says whether it is signed in, or that it is not installed.
	waitFor(t, ctx, "each agent's state", `[...document.querySelectorAll('#settings [data-agent]')].every((r) => r.querySelector('.pill')?.textContent.trim())`)
	// Sign in is offered only to an installed agent that is not signed in.
	waitFor(t, ctx, "sign-in buttons", `[...document.querySelectorAll('#settings [data-agent]')].every((r) =>
		!r.querySelector('.agent-signin') || (r.dataset.installed === 'true' && r.dataset.signedIn !== 'yes'))`)

	// Agents that are not installed fold into one line, which opens to say how to install each.
	missing, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll('#settings [data-agent][data-installed="false"]').length`))
	if err != nil {
		t.Fatal(err)
	}
	if missing == 0 {
		waitFor(t, ctx, "no line for agents not installed", `!document.querySelector('#agents-missing')`)
	} else {
		waitFor(t, ctx, "the agents not installed, in one line", `(() => {
			const missing = [...document.querySelectorAll('#settings [data-agent][data-installed="false"]')];
			const line = document.querySelector('#agents-missing summary .not-installed-line')?.textContent ?? '';
			return line.startsWith('Not installed: ') && line.endsWith('.') &&
				missing.every((r) => r.closest('#agents-missing') && !r.checkVisibility() && line.includes(r.querySelector('strong').textContent));
		})()`)
		press(t, ctx, `#agents-missing summary`)
		waitFor(t, ctx, "their rows once opened", `[...document.querySelectorAll('#agents-missing [data-agent]')].every((r) => r.checkVisibility())`)
		press(t, ctx, `#agents-missing summary`)
	}

	// The section navigation takes the page to a section and marks it.
	waitFor(t, ctx, "every section in the navigation", `[...document.querySelectorAll('#settings-nav [data-section]')].every((a) => !!document.getElementById(a.dataset.section + '-settings'))`)
	press(t, ctx, `#settings-nav [data-section="keys"]`)
	waitFor(t, ctx, "Editor keys in view, marked", `(() => {
		const page = document.querySelector('#settings'), view = page.getBoundingClientRect();
		const top = document.querySelector('#keys-settings').getBoundingClientRect().top;
		return location.hash === '#/settings/keys' && top >= view.top - 1 && top < view.bottom - 120 &&
			document.querySelector('#settings-nav [data-section="keys"]').getAttribute('aria-current') === 'true' &&
			document.querySelectorAll('#settings-nav [aria-current]').length === 1;
	})()`)
	screenshot(t, ctx, "settings-sections-1280.png", 1280)
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(1280, 900)); err != nil {
		t.Fatal(err)
	}

	// Check again detects afresh.
	press(t, ctx, `#agents-refresh`)
	waitFor(t, ctx, "the agents after checking again", `document.querySelector('#agents-refresh').textContent.includes('Check again') && !!document.querySelector('#settings [data-agent="claude"]')`)

	// Phone access is not set up in this runtime: the page says how.
	waitFor(t, ctx, "phones not set up", `document.querySelector('#phones-setup')?.textContent.includes('ensemble pair setup')`)

	// Make an editor key.
	if err := setInput(ctx, "#key-name", "Laptop editor"); err != nil {
		t.Fatal(err)
	}
	press(t, ctx, `#key-write`)
	press(t, ctx, `#key-create`)
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
	if err := chromedp.Do(ctx, chromedp.Reload()); err != nil {
		t.Fatal(err)
	}
	waitShown(t, ctx, `#settings`)
	waitFor(t, ctx, "the key listed after a reload", `!!document.querySelector('#keys-list [data-key]') && !document.querySelector('#new-key-secret')`)
}

// TestUISettingsPageSignIn finds an installed agent that is not signed in (a stand-in codex in the
// person's ~/bin, put on PATH by their ~/.profile as a login shell reads it), clicks its "Sign in"
// and sees the terminal open running its sign-in command, `codex login`.
func TestUISettingsPageSignIn(t *testing.T) {
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
	ctx, cancel := context.WithTimeout(browser, browserTestTime)
	defer cancel()

	if err := chromedp.Do(ctx, chromedp.Navigate(rt.SigninURL())); err != nil {
		t.Fatalf("open Settings: %v", err)
	}
	waitFor(t, ctx, "the board, live", `document.querySelector('#live')?.dataset.state === 'live'`)
	press(t, ctx, `#settings-button`)
	waitShown(t, ctx, `#settings`)
	row := `document.querySelector('#settings [data-agent="codex"]')`
	waitFor(t, ctx, "codex installed and not signed in, with Sign in", row+`?.dataset.installed === 'true' && `+row+`.dataset.signedIn === 'no' && !!`+row+`.querySelector('.agent-signin')`)
	if v, _ := chromedp.Run(ctx, chromedp.Evaluate[string](row+`.querySelector('.row-title').textContent`)); !strings.Contains(v, "0.0.1-standin") {
		t.Errorf("the codex row shows %q, not the stand-in's version", v)
	}
	press(t, ctx, `#settings [data-agent="codex"] .agent-signin`)
	waitShown(t, ctx, `#terminal .xterm-rows`)
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
