package browser

import (
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"net/url"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"
)

// shown is the page a live view or takeover of a tab sees: the clean browser's newest window
// while it is open, else the tab's own page.
func (b *Broker) shown(t *tab) (context.Context, target.ID, bool) {
	// A held tab that is opening again holds its action lock: wait for it.
	t.act.Lock()
	t.act.Unlock()
	if cb := b.cleanOf(t.id); cb != nil {
		if p, ok := cb.active(); ok {
			return p.ctx, p.id, p.popup
		}
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.ctx, t.targetID, t.popup
}

// Screencast sends the page's frames to each until stop or ctx ends. It is allowed on a
// sensitive tab: its one caller is the owner's own view.
func (b *Broker) Screencast(ctx context.Context, w Work, id string, o ScreencastOptions, each func(Frame)) (func(), error) {
	t, err := b.use(w, id, true)
	if err != nil {
		return nil, err
	}
	if o.MaxWidth <= 0 {
		o.MaxWidth = 1024
	}
	if o.Quality <= 0 || o.Quality > 100 {
		o.Quality = 45
	}
	pctx, tid, popup := b.shown(t)
	sctx, cancel := context.WithCancel(pctx)
	stopCaller := context.AfterFunc(ctx, cancel)
	frames := chromedp.Events(sctx, page.ScreencastFrame)
	if _, err := chromedp.Call(sctx, page.StartScreencast, page.StartScreencastParams{
		Format: page.StartScreencastFormatJpeg, Quality: new(int64(o.Quality)), MaxWidth: int64(o.MaxWidth), MaxHeight: int64(o.MaxWidth * 2),
	}); err != nil {
		cancel()
		stopCaller()
		return nil, fmt.Errorf("starting the screencast: %w", err)
	}
	go b.pumpFrames(sctx, pctx, tid, popup, frames, each)
	stop := func() {
		stopCaller()
		cancel()
		c, done := context.WithTimeout(pctx, 3*time.Second)
		defer done()
		_, _ = chromedp.Call(c, page.StopScreencast, cdp.Empty{})
	}
	return stop, nil
}

// pumpFrames acks every frame and delivers those unlike the last.
func (b *Broker) pumpFrames(ctx, pctx context.Context, tid target.ID, popup bool, frames func(func(page.EventScreencastFrame, error) bool), each func(Frame)) {
	var last [32]byte
	for ev, err := range frames {
		if err != nil {
			return
		}
		_, _ = chromedp.Call(ctx, page.ScreencastFrameAck, page.ScreencastFrameAckParams{SessionID: ev.SessionID})
		sum := sha256.Sum256(ev.Data)
		if bytes.Equal(sum[:], last[:]) {
			continue
		}
		last = sum
		f := Frame{JPEG: ev.Data, Popup: popup}
		if m := ev.Metadata; m != nil {
			f.Width, f.Height = int(m.DeviceWidth), int(m.DeviceHeight)
		}
		if info, err := chromedp.CallBrowser(ctx, target.GetTargetInfo, target.GetTargetInfoParams{TargetID: tid}); err == nil && info.TargetInfo != nil {
			f.URL, f.Title = WithoutQuery(info.TargetInfo.URL), info.TargetInfo.Title
		}
		each(f)
	}
}

// WithoutQuery is an address with neither its query, its fragment nor a user: what a person
// may see of a page's address (a sign-in's state and codes ride in the query).
func WithoutQuery(u string) string {
	p, err := url.Parse(u)
	if err != nil {
		return ""
	}
	p.RawQuery, p.Fragment, p.User = "", "", nil
	return p.String()
}

// Input applies one takeover input to the page shown, as real input.
func (b *Broker) Input(ctx context.Context, w Work, id string, in Input) error {
	t, err := b.use(w, id, true)
	if err != nil {
		return err
	}
	pctx, _, _ := b.shown(t)
	return runUnder(ctx, pctx, func(c context.Context) error { return applyInput(c, in) })
}

// applyInput dispatches one input through the Input domain; it runs no page script.
func applyInput(ctx context.Context, in Input) error {
	switch in.Kind {
	case "key":
		return pressKey(ctx, in.Key)
	case "text":
		_, err := chromedp.Call(ctx, input.InsertText, input.InsertTextParams{Text: in.Text})
		return err
	}
	lm, err := chromedp.Call(ctx, page.GetLayoutMetrics, cdp.Empty{})
	if err != nil {
		return err
	}
	vw, vh := 1280.0, 800.0
	if v := lm.CSSVisualViewport; v != nil {
		vw, vh = v.ClientWidth, v.ClientHeight
	}
	x, y := clamp01(in.X)*vw, clamp01(in.Y)*vh
	mouse := func(ty input.DispatchMouseEventType, button input.MouseButton, buttons int64) error {
		p := input.DispatchMouseEventParams{Type: ty, X: x, Y: y, Button: button, Buttons: buttons}
		if ty == input.DispatchMouseEventTypeMousePressed || ty == input.DispatchMouseEventTypeMouseReleased {
			p.ClickCount = 1
		}
		if ty == input.DispatchMouseEventTypeMouseWheel {
			p.DeltaX, p.DeltaY = in.DX, in.DY
		}
		_, err := chromedp.Call(ctx, input.DispatchMouseEvent, p)
		return err
	}
	switch in.Kind {
	case "tap":
		return mouseClick(ctx, x, y)
	case "down":
		return mouse(input.DispatchMouseEventTypeMousePressed, input.MouseButtonLeft, 1)
	case "up":
		return mouse(input.DispatchMouseEventTypeMouseReleased, input.MouseButtonLeft, 0)
	case "move":
		return mouse(input.DispatchMouseEventTypeMouseMoved, input.MouseButtonNone, 0)
	case "wheel":
		return mouse(input.DispatchMouseEventTypeMouseWheel, input.MouseButtonNone, 0)
	}
	return fmt.Errorf("unknown input kind %q", in.Kind)
}

func clamp01(v float64) float64 { return min(max(v, 0), 1) }
