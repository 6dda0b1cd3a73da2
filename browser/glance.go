package browser

import (
	"context"
	"errors"
	"fmt"
	"math"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
)

// ErrBusy is a glance at a tab while an action on it is under way: the next one will do.
var ErrBusy = errors.New("the tab is busy with an action")

// Glancer takes the small pictures a run's live view shows the person (spec 002 §8.16) while its
// agent uses a tab.
type Glancer interface {
	// Glance is a JPEG of what tab shows now, scaled to at most width pixels across, its secret
	// fields masked. It neither renews the tab's lease nor waits for an action under way
	// (ErrBusy), and a tab held for its owner is not pictured (ErrSensitive).
	Glance(ctx context.Context, w Work, tab string, width, quality int) (Shot, error)
}

var _ Glancer = (*Broker)(nil)

// Glance implements [Glancer].
func (b *Broker) Glance(ctx context.Context, w Work, id string, width, quality int) (Shot, error) {
	b.mu.Lock()
	t := b.tabs[id]
	err := b.mayUseLocked(t, w, id, false)
	b.mu.Unlock()
	if err != nil {
		return Shot{}, err
	}
	if t.ready != nil {
		select {
		case <-t.ready:
		default:
			return Shot{}, ErrBusy
		}
	}
	if !t.act.TryLock() {
		return Shot{}, ErrBusy
	}
	defer t.act.Unlock()
	scale := 1.0
	if width > 0 && t.width > width {
		scale = float64(width) / float64(t.width)
	}
	var s Shot
	err = runUnder(ctx, t.context(), func(c context.Context) error {
		return b.shoot(c, t, ShotOptions{Quality: quality, scale: scale}, &s)
	})
	if err != nil {
		return Shot{}, fmt.Errorf("glancing at the tab: %w", err)
	}
	s.Page = b.pageOf(ctx, t)
	return s, nil
}

// viewClip is the part of the page the viewport shows, at scale: a clip is in the document's
// coordinates, so a scrolled page's is where it is scrolled to.
func viewClip(ctx context.Context, width, height int, scale float64) (*page.Viewport, error) {
	lm, err := chromedp.Call(ctx, page.GetLayoutMetrics, cdp.Empty{})
	if err != nil {
		return nil, err
	}
	v := &page.Viewport{Width: float64(width), Height: float64(height), Scale: scale}
	if vv := lm.CSSVisualViewport; vv != nil {
		v.X, v.Y = vv.PageX, vv.PageY
		v.Width, v.Height = math.Max(vv.ClientWidth, 1), math.Max(vv.ClientHeight, 1)
	}
	return v, nil
}
