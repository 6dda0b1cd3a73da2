package app

import (
	"context"
	"image/color"
	"math"
	"testing"

	"github.com/chromedp/chromedp"

	chromium "github.com/ensemblework/ensemble/browser"
	"github.com/ensemblework/ensemble/engines/enginetest"
	"github.com/ensemblework/ensemble/runtime/node/livetest"
)

// TestNodeUILiveBrowser: a node shows its owner one of its tabs live (a fake broker behind the
// runtime, streaming real JPEGs); the page draws the decrypted pictures, takes control, and a tap
// on the picture reaches the tab at the fractions it was made at, as does text from the phone's
// box. Looked at in Chromium at 1280 and 390 px.
func TestNodeUILiveBrowser(t *testing.T) {
	needUI(t)
	fb := &livetest.Browser{InputCh: make(chan chromium.Input, 16)}
	fb.Paint(color.RGBA{40, 110, 200, 255})
	browser := newBrowser(t)
	ctx, cancel := context.WithTimeout(browser, browserTestTime)
	defer cancel()
	rt, c, model, n := startNodeRuntime(t, ctx, runtimeConfig{Browser: fb}, "Scout")
	fb.Add(chromium.Work("node:"+n.ID+":own"), chromium.TabInfo{ID: "t1", URL: "https://shop.example/cart?session=abc", Title: "Your cart — Example Shop"})
	yes := true
	model.Script(
		enginetest.ToolCall("live_view", map[string]any{"kind": "browser", "tab": "t1"}).When(enginetest.Match{LastUserContains: "tab t1"}),
		enginetest.Say("It is on the card.").When(enginetest.Match{ToolResult: &yes, LastUserContains: "live card"}),
	)
	if err := c.do(ctx, "POST", "/api/node/rooms/"+n.DMRoomID+"/messages", map[string]any{"body": "Show me tab t1 live, like a terminal view.", "clientId": "c1"}, nil); err != nil {
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
	pic := card + ` .bv-picture`
	waitFor(t, ctx, "the tab's picture, decrypted", `console.log(JSON.stringify({w: document.querySelector('`+pic+`')?.naturalWidth, s: document.querySelector('`+card+` .bv-site')?.textContent, n: document.querySelector('`+card+`')?.innerText})) || (document.querySelector('`+pic+`')?.naturalWidth || 0) === 256 &&
		document.querySelector('`+card+` .bv-site')?.textContent === 'shop.example'`)
	fb.Paint(color.RGBA{30, 150, 90, 255}) // a new picture replaces the last (its Blob URL revoked)
	press(t, ctx, card+` .live-control`)
	waitFor(t, ctx, "control, at 1280 px", `document.querySelector('`+card+` .live-card')?.dataset.mode === 'control' &&
		document.querySelector('`+pic+`')?.naturalWidth === 320`)

	at, err := chromedp.Run(ctx, chromedp.Evaluate[[]float64](`(() => {
		const el = document.querySelector('`+pic+`');
		el.scrollIntoView({ block: 'center' });
		const r = el.getBoundingClientRect();
		return [r.left + r.width * 0.25, r.top + r.height * 0.75];
	})()`))
	if err != nil || len(at) != 2 {
		t.Fatalf("where the picture is: %v %v", at, err)
	}
	if err := chromedp.Do(ctx, chromedp.MouseClickXY(at[0], at[1])); err != nil {
		t.Fatal(err)
	}
	in := <-fb.InputCh
	if in.Kind != "tap" || math.Abs(in.X-0.25) > 0.01 || math.Abs(in.Y-0.75) > 0.01 {
		t.Fatalf("the tap reached the tab as %+v, want a tap at 0.25, 0.75", in)
	}
	if err := chromedp.Do(ctx, chromedp.SendKeys(card+` .bv-type input`, "hello from the phone")); err != nil {
		t.Fatal(err)
	}
	press(t, ctx, card+` .bv-enter`)
	if in := <-fb.InputCh; in.Kind != "text" || in.Text != "hello from the phone" {
		t.Fatalf("the text box's text reached the tab as %+v", in)
	}
	if in := <-fb.InputCh; in.Kind != "key" || in.Key != "Enter" {
		t.Fatalf("Enter reached the tab as %+v", in)
	}
	screenshot(t, ctx, "node-live-browser-1280.png", 1280)
	screenshot(t, ctx, "node-live-browser-390.png", 390)
	waitFor(t, ctx, "no sideways scroll on a phone", `document.documentElement.scrollWidth <= innerWidth`)
	press(t, ctx, card+` .live-handback`)
	waitFor(t, ctx, "handed back", `document.querySelector('`+card+` .live-card')?.dataset.mode === 'watch' && !document.querySelector('`+card+` .bv-type')`)
	screenshot(t, ctx, "node-live-browser-watch-390.png", 390)
	press(t, ctx, card+` .live-stop`)
	waitFor(t, ctx, "the view stopped", `!document.querySelector('`+card+` .bv') && !!document.querySelector('`+card+` .live-watch')`)
}
