//go:build !windows

package app

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/chromedp"
)

// TestUITerminalInBrowser opens the terminal from the header, types a command into xterm.js and reads
// its output back from the page; then takes pictures of it, wide and phone-sized.
func TestUITerminalInBrowser(t *testing.T) {
	needUI(t)
	// The shell's start-up files are this computer's, not the test's (a stale lock in one of them
	// kept the prompt from ever showing): a home of its own.
	t.Setenv("HOME", t.TempDir())
	rt := startTestRuntime(t)
	browser := newBrowser(t)
	ctx, cancel := context.WithTimeout(browser, browserTestTime)
	defer cancel()

	if err := chromedp.Do(ctx, chromedp.Navigate(rt.SigninURL())); err != nil {
		t.Fatalf("sign in: %v", err)
	}
	waitFor(t, ctx, "the board, live", `document.querySelector('#live')?.dataset.state === 'live'`)
	press(t, ctx, `#terminal-button`)
	waitFor(t, ctx, "the shell's prompt", `document.querySelector('.term-panel')?.dataset.state === 'live' && document.querySelector('#terminal .xterm-rows')?.textContent.trim() !== ''`)
	press(t, ctx, `#terminal .xterm-screen`)
	if err := chromedp.Do(ctx,
		chromedp.Focus(chromedp.CSS(`#terminal textarea.xterm-helper-textarea`)),
		// Text goes in as a keyboard's input does; chromedp's key events (keyDown with text, then
		// char) reach xterm.js twice each.
		chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
			_, err := cdp.Call(ctx, tg, input.InsertText, input.InsertTextParams{Text: "echo hi"})
			return err
		}),
		chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error { // Enter, as a keyboard sends it
			for _, ev := range []input.DispatchKeyEventParams{
				{Type: input.DispatchKeyEventTypeKeyDown, Key: "Enter", Code: "Enter", WindowsVirtualKeyCode: 13, Text: "\r"},
				{Type: input.DispatchKeyEventTypeKeyUp, Key: "Enter", Code: "Enter", WindowsVirtualKeyCode: 13},
			} {
				if _, err := cdp.Call(ctx, tg, input.DispatchKeyEvent, ev); err != nil {
					return err
				}
			}
			return nil
		}),
	); err != nil {
		t.Fatalf("type: %v", err)
	}
	// "hi" alone on a row: the command's output, not the line that typed it.
	rows, err := chromedp.Run(ctx, chromedp.Poll[[]string](
		`(() => { const rows = [...document.querySelectorAll('#terminal .xterm-rows > div')].map(r => r.textContent.trim());
		  return rows.includes('hi') ? rows : null })()`, pollFor(ctx)...))
	if err != nil {
		text, _ := chromedp.Run(context.WithoutCancel(browser), chromedp.Evaluate[string](`document.querySelector('#terminal').innerText`))
		screenshot(t, browser, "terminal-failed.png", 1280)
		t.Fatalf("hi did not come back: %v; the terminal shows:\n%s", err, text)
	}
	t.Logf("terminal rows: %q", strings.Join(rows, " | "))
	if n := len(rt.terms.List()); n != 1 {
		t.Fatalf("%d terminals open, want 1", n)
	}
	// Closing the panel leaves the shell running; opening it again shows the same screen, replayed
	// by the runtime, and the same shell takes input.
	press(t, ctx, `#terminal-button`)
	waitFor(t, ctx, "the panel closed", `!document.querySelector('#terminal')`)
	press(t, ctx, `#terminal-button`)
	waitFor(t, ctx, "the panel again", shown(`#terminal .xterm-rows`))
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](
		`[...document.querySelectorAll('#terminal .xterm-rows > div')].some(r => r.textContent.trim() === 'hi')`, pollFor(ctx)...)); err != nil {
		t.Fatalf("the screen was not replayed on reopening: %v", err)
	}
	if n := len(rt.terms.List()); n != 1 {
		t.Fatalf("%d terminals after reopening, want the same 1", n)
	}
	for _, w := range []int64{1280, 390} {
		// A new width resizes the terminal; the shell redraws its prompt, which the picture waits for.
		if err := chromedp.Do(ctx, chromedp.EmulateViewport(w, 900)); err != nil {
			t.Fatal(err)
		}
		if _, err := chromedp.Run(ctx, chromedp.Poll[bool](
			`(() => { const rows = [...document.querySelectorAll('#terminal .xterm-rows > div')].map(r => r.textContent.trim());
			  const i = rows.indexOf('hi'); return i >= 0 && /[#$%>]$/.test(rows[i+1] ?? '') })()`, pollFor(ctx)...)); err != nil {
			t.Fatalf("the prompt did not come back at %d wide: %v", w, err)
		}
		screenshot(t, ctx, fmt.Sprintf("terminal-%d.png", w), w)
	}
}
