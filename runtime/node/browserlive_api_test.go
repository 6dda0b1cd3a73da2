//go:build !windows

package node_test

import (
	"bytes"
	"context"
	"encoding/json"
	"image/color"
	"image/jpeg"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/ensemblework/ensemble/browser"
	"github.com/ensemblework/ensemble/runtime/node"
	"github.com/ensemblework/ensemble/runtime/takeover"
)

// picture reads the runtime's next browser frame, says it is drawn, and answers its header and
// the colour at its top left; an end answers a header whose T is "end".
func (p *page) picture(ctx context.Context) (takeover.JPEGHeader, color.RGBA) {
	p.t.Helper()
	h, c := p.unseen(ctx)
	if h.T == "frame" {
		p.send(ctx, map[string]any{"t": "seen", "seq": h.Seq})
	}
	return h, c
}

// unseen is picture without saying it is drawn.
func (p *page) unseen(ctx context.Context) (takeover.JPEGHeader, color.RGBA) {
	p.t.Helper()
	typ, data, err := p.c.Read(ctx)
	if err != nil {
		p.t.Fatalf("waiting for a picture: %v", err)
	}
	if typ != websocket.MessageBinary {
		p.t.Fatalf("a %v message from the runtime; all are binary", typ)
	}
	if bytes.Contains(data, []byte("shop.example")) {
		p.t.Fatal("the page's address passed in the clear")
	}
	plain, err := p.ch.Open(data)
	if err != nil {
		p.t.Fatal(err)
	}
	if plain[0] == '{' {
		var end takeover.End
		json.Unmarshal(plain, &end)
		return takeover.JPEGHeader{T: end.T, Title: end.Reason}, color.RGBA{}
	}
	h, pic, err := takeover.DecodeJPEGFrame(plain)
	if err != nil {
		p.t.Fatal(err)
	}
	img, err := jpeg.Decode(bytes.NewReader(pic))
	if err != nil {
		p.t.Fatalf("frame %d is not a JPEG: %v", h.Seq, err)
	}
	if b := img.Bounds(); b.Dx() != h.Width || b.Dy() != h.Height {
		p.t.Fatalf("frame %d says %dx%d, is %v", h.Seq, h.Width, h.Height, b)
	}
	r, g, b, _ := img.At(0, 0).RGBA()
	return h, color.RGBA{uint8(r >> 8), uint8(g >> 8), uint8(b >> 8), 255}
}

// near says two JPEG colours are the same colour, give or take the compression.
func near(a, b color.RGBA) bool {
	d := func(x, y uint8) bool { return max(x, y)-min(x, y) < 24 }
	return d(a.R, b.R) && d(a.G, b.G) && d(a.B, b.B)
}

func TestBrowserTakeoverWebSocket(t *testing.T) {
	bl := node.NewBrowserLiveFixture(t)
	ls := newLiveServerOf(t, &bl.LiveFixture)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	tk := ls.open(t)
	if tk.Kind != "browser" || tk.Tab != "t1" || tk.Mode != "watch" {
		t.Fatalf("takeover = %+v", tk)
	}
	bl.Browser.InputCh = make(chan browser.Input, 8)
	p := ls.dial(t, ctx, tk)

	// The first picture: the page as it is, watching at 1024 px and quality 45, its address
	// without the query.
	h, _ := p.unseen(ctx)
	if h.Seq != 1 || h.Mode != "watch" || h.URL != "https://shop.example/cart" || h.Title != "Your cart" || h.Width != 256 {
		t.Fatalf("first frame = %+v", h)
	}
	if o := bl.Browser.Options(); len(o) != 1 || o[0] != (browser.ScreencastOptions{MaxWidth: 1024, Quality: 45}) {
		t.Fatalf("screencast options = %+v", o)
	}
	red := color.RGBA{220, 20, 20, 255}
	bl.Browser.Paint(red)
	if h, c := p.unseen(ctx); h.Seq != 2 || !near(c, red) {
		t.Fatalf("second frame = %+v, colour %v", h, c)
	}

	// Watching, a tap is not applied. Two frames are unseen, so the next comes only once the seen
	// after the tap is read: the tap has been taken (and ignored) by then.
	p.send(ctx, map[string]any{"t": "tap", "x": 0.5, "y": 0.5}, map[string]any{"t": "ping"})
	blue := color.RGBA{20, 20, 220, 255}
	bl.Browser.Paint(blue)
	p.send(ctx, map[string]any{"t": "seen", "seq": 2})
	if h, c := p.picture(ctx); h.Seq != 3 || !near(c, blue) {
		t.Fatalf("third frame = %+v, colour %v", h, c)
	}

	// In control: 1280 px at 55, the same page again saying so, and the tap reaches the tab.
	if code, out := ls.call(t, "POST", "/api/node/takeovers/"+tk.ID+"/control", `{"on":true}`); code != 200 {
		t.Fatalf("control: %d %v", code, out)
	}
	if !bl.TabControlled("t1") {
		t.Fatal("the node's tools on t1 do not see the owner in control")
	}
	if h, c := p.picture(ctx); h.Mode != "control" || h.Width != 320 || !near(c, blue) {
		t.Fatalf("in control: %+v %v", h, c)
	}
	p.send(ctx, map[string]any{"t": "tap", "x": 0.25, "y": 0.75}, map[string]any{"t": "text", "text": "hello"}, map[string]any{"t": "key", "key": "Enter"})
	var got []browser.Input
	for len(got) < 3 {
		select {
		case in := <-bl.Browser.InputCh:
			got = append(got, in)
		case <-ctx.Done():
			t.Fatalf("inputs applied: %+v", got)
		}
	}
	want := []browser.Input{{Kind: "tap", X: 0.25, Y: 0.75}, {Kind: "text", Text: "hello"}, {Kind: "key", Key: "Enter"}}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("input %d = %+v, want %+v (the watching tap must not be among them)", i, got[i], want[i])
		}
	}

	// The node closes the tab: the page hears the view ended, encrypted.
	bl.Browser.Remove(browser.Work("node:"+bl.NodeID()+":own"), "t1")
	bl.Svc.BrowserTabClosedForTest(bl.NodeID(), "t1", true)
	for {
		h, _ := p.picture(ctx)
		if h.T == "end" {
			if h.Title != node.ReasonClosedByNode {
				t.Fatalf("ended %q", h.Title)
			}
			break
		}
	}
	if code, _ := ls.call(t, "POST", "/api/node/takeovers", `{"liveCardId":"`+ls.CardID+`"}`); code != http.StatusGone {
		t.Fatalf("the closed tab's card: %d, want 410", code)
	}
}

func TestLoginTakeoverRoutes(t *testing.T) {
	bl := node.NewBrowserLiveFixture(t)
	ls := newLiveServerOf(t, &bl.LiveFixture)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, c := range []struct {
		name, body string
		want       int
	}{
		{"both cards", `{"liveCardId":"` + ls.CardID + `","loginCardId":"` + bl.LoginCardID + `"}`, 400},
		{"no card", `{}`, 400},
		{"not a sign-in card", `{"loginCardId":"` + ls.CardID + `"}`, 404},
		{"a run without its tab", `{"runId":"job_1"}`, 400},
		{"a tab without its run", `{"tab":"t1"}`, 400},
		{"a run and a card", `{"runId":"job_1","tab":"t1","loginCardId":"` + bl.LoginCardID + `"}`, 400},
		{"a run's tab not held", `{"runId":"job_none","tab":"t1"}`, 410},
		{"a wrong type", `{"runId":7,"tab":"t1"}`, 400},
		{"an unknown field", `{"runId":"job_1","tab":"t1","mode":"watch"}`, 400},
	} {
		if code, out := ls.call(t, "POST", "/api/node/takeovers", c.body); code != c.want {
			t.Errorf("%s: %d %v, want %d", c.name, code, out, c.want)
		}
	}
	code, out := ls.call(t, "POST", "/api/node/takeovers", `{"loginCardId":"`+bl.LoginCardID+`"}`)
	if code != http.StatusCreated {
		t.Fatalf("open: %d %v", code, out)
	}
	b, _ := json.Marshal(out["takeover"])
	var tk node.Takeover
	json.Unmarshal(b, &tk)
	if tk.Browser != "clean" || tk.Mode != "control" || tk.Tab != "t2" {
		t.Fatalf("takeover = %+v", tk)
	}
	p := ls.dial(t, ctx, tk)
	if h, _ := p.picture(ctx); h.Mode != "control" || !strings.HasPrefix(h.Title, "Clean: ") {
		t.Fatalf("the clean browser's first frame = %+v", h)
	}
	path := "/api/node/takeovers/" + tk.ID + "/end"
	if code, out := ls.call(t, "POST", path, `{}`); code != 400 {
		t.Fatalf("end without done: %d %v", code, out)
	}
	if code, out := ls.call(t, "POST", path, `{"done":true}`); code != 200 || out["takeover"].(map[string]any)["ended"] == true {
		t.Fatalf("done, not signed in: %d %v", code, out)
	}
	bl.Browser.SignedIn = true
	if code, out := ls.call(t, "POST", path, `{"done":true}`); code != 200 || out["takeover"].(map[string]any)["endReason"] != node.ReasonSignedIn {
		t.Fatalf("done, signed in: %d %v", code, out)
	}
	if h, _ := p.picture(ctx); h.T != "end" || h.Title != node.ReasonSignedIn {
		t.Fatalf("the page heard %+v", h)
	}
}
