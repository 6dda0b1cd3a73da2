package app

import (
	"context"
	"io"
	"log/slog"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/ensemblework/ensemble/engines/enginetest"
)

// TestNodeUILiveTerminal: a node opens a real terminal with its live card; the page watches it
// (frames over the encrypted channel, decrypted in the page), takes control, types a line the
// shell runs, and hands it back. Looked at in Chromium at 1280 and 390 px.
func TestNodeUILiveTerminal(t *testing.T) {
	needUI(t)
	model := enginetest.NewServer(t)
	t.Setenv("ANTHROPIC_API_KEY", "test-key")
	t.Setenv("ANTHROPIC_BASE_URL", model.URL)
	rt, err := startRuntime(context.Background(), runtimeConfig{DataDir: t.TempDir(), Addr: "127.0.0.1:0", Log: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rt.Close() })
	browser := newBrowser(t)
	ctx, cancel := context.WithTimeout(browser, browserTestTime)
	defer cancel()
	c := &client{f: apiFile{URL: rt.URL, Token: readToken(t, rt)}, http: httpClient()}
	if err := c.do(ctx, "PUT", "/api/assistant/settings", map[string]any{"provider": "anthropic", "model": "claude-test"}, nil); err != nil {
		t.Fatal(err)
	}
	var n struct {
		ID       string `json:"id"`
		DMRoomID string `json:"dmRoomId"`
	}
	if err := c.do(ctx, "POST", "/api/node/nodes", map[string]any{"name": "Scout"}, &n); err != nil {
		t.Fatal(err)
	}
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
