package app

import (
	"context"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/ensemblework/ensemble/engines/enginetest"
)

// TestNodeUILiveTerminal: a node opens a real terminal with its live card; the page watches it
// (frames over the encrypted channel, decrypted in the page), takes control, types a line the
// shell runs, and hands it back. Looked at in Chromium at 1280 and 390 px.
func TestNodeUILiveTerminal(t *testing.T) {
	needUI(t)
	browser := newBrowser(t)
	ctx, cancel := context.WithTimeout(browser, browserTestTime)
	defer cancel()
	rt, c, model, n := startNodeRuntime(t, ctx, runtimeConfig{}, "Scout")
	yes := true
	model.Script(
		enginetest.ToolCall("terminal_open", map[string]any{"live": true}).When(enginetest.Match{LastUserContains: "open a terminal"}),
		enginetest.Say("It is open; watch it on the card.").When(enginetest.Match{ToolResult: &yes, LastUserContains: "live card"}),
	)
	if err := c.do(ctx, "POST", "/api/node/rooms/"+n.DMRoomID+"/messages", map[string]any{"body": "Please open a terminal I can watch.", "clientId": "c1"}, nil); err != nil {
		t.Fatal(err)
	}

	if err := chromedp.Do(ctx, chromedp.Navigate(rt.SigninURL())); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "the board, live", `document.querySelector('#live')?.dataset.state === 'live'`)
	if err := chromedp.Do(ctx, chromedp.Navigate(rt.URL+"/#/nodes/"+n.DMRoomID)); err != nil {
		t.Fatal(err)
	}
	card := `[data-kind="live"]`
	waitFor(t, ctx, "the live card", `!!document.querySelector('`+card+` .live-watch')`)
	press(t, ctx, card+` .live-watch`)
	waitFor(t, ctx, "the shell's prompt in the view", `/[#$]/.test(document.querySelector('`+card+` .live-screen pre')?.textContent || '')`)
	press(t, ctx, card+` .live-control`)
	waitFor(t, ctx, "control", `document.querySelector('`+card+` .live-card')?.dataset.mode === 'control'`)
	if err := chromedp.Do(ctx, chromedp.SendKeys(card+` .live-type input`, "echo typed-by-$((6*7))-the-owner")); err != nil {
		t.Fatal(err)
	}
	press(t, ctx, card+` .live-type button`)
	waitFor(t, ctx, "the owner's line run in the shell", `(document.querySelector('`+card+` .live-screen pre')?.textContent || '').includes('typed-by-42-the-owner')`)
	screenshot(t, ctx, "node-live-terminal-1280.png", 1280)
	screenshot(t, ctx, "node-live-terminal-390.png", 390)
	waitFor(t, ctx, "no sideways scroll on a phone", `document.documentElement.scrollWidth <= innerWidth`)
	press(t, ctx, card+` .live-handback`)
	waitFor(t, ctx, "handed back", `document.querySelector('`+card+` .live-card')?.dataset.mode === 'watch'`)
	press(t, ctx, card+` .live-stop`)
	waitFor(t, ctx, "the view stopped", `!document.querySelector('`+card+` .live-screen')`)
}
