package browser

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/dom"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
)

// maskJS hides secret fields' contents before a shot and reads what is on screen for the
// caller's checks: the visible text and the values of fields that are not secret.
const maskJS = `(() => {
  const sel = %q;
  let masked = 0;
  for (const e of document.querySelectorAll(sel)) {
    if (e.dataset.ensembleMask !== undefined) continue;
    e.dataset.ensembleMask = e.getAttribute('style') || '';
    e.style.setProperty('color', 'transparent', 'important');
    e.style.setProperty('text-shadow', 'none', 'important');
    e.style.setProperty('-webkit-text-security', 'disc', 'important');
    e.style.setProperty('background-color', '#d9d9d9', 'important');
    masked++;
  }
  const secret = new Set(document.querySelectorAll(sel));
  const vals = [...document.querySelectorAll('input,textarea,select')]
    .filter(e => !secret.has(e) && e.type !== 'hidden' && e.value).map(e => e.value);
  const text = (document.body ? document.body.innerText : '') + '\n' + vals.join('\n');
  return {masked, text};
})()`

// unmaskJS puts the fields back as they were.
const unmaskJS = `(() => {
  for (const e of document.querySelectorAll('[data-ensemble-mask]')) {
    const s = e.dataset.ensembleMask;
    if (s) e.setAttribute('style', s); else e.removeAttribute('style');
    delete e.dataset.ensembleMask;
  }
  return true;
})()`

type maskResult struct {
	Masked int    `json:"masked"`
	Text   string `json:"text"`
}

// Screenshot captures the tab with its secret fields masked.
func (b *Broker) Screenshot(ctx context.Context, w Work, id string, o ShotOptions) (Shot, error) {
	t, err := b.use(w, id, false)
	if err != nil {
		return Shot{}, err
	}
	t.act.Lock()
	defer t.act.Unlock()
	var s Shot
	err = runUnder(ctx, t.context(), func(c context.Context) error { return b.shoot(c, t, o, &s) })
	if err != nil {
		return Shot{}, fmt.Errorf("taking a screenshot: %w", err)
	}
	s.Page = b.finish(ctx, t, b.popupMark(), false)
	return s, nil
}

func (b *Broker) shoot(ctx context.Context, t *tab, o ShotOptions, s *Shot) error {
	width, height := t.width, t.height
	if o.Width > 0 && o.Height > 0 && (o.Width != t.width || o.Height != t.height) {
		width, height = o.Width, o.Height
		if err := b.viewport(ctx, width, height); err != nil {
			return err
		}
		defer func() {
			c, cancel := afterCall(ctx, t)
			defer cancel()
			b.viewport(c, t.width, t.height)
		}()
	}
	m, err := chromedp.Run(ctx, chromedp.Evaluate[maskResult](fmt.Sprintf(maskJS, secretSelector)))
	if err != nil {
		return err
	}
	defer func() {
		c, cancel := afterCall(ctx, t)
		defer cancel()
		chromedp.Run(c, chromedp.Evaluate[bool](unmaskJS))
	}()
	s.Masked, s.Text = m.Masked, m.Text
	p := page.CaptureScreenshotParams{Format: page.CaptureScreenshotFormatPng, OptimizeForSpeed: new(true)}
	s.Mime = "image/png"
	if o.Quality > 0 && o.Quality < 100 {
		p.Format, p.Quality, s.Mime = page.CaptureScreenshotFormatJpeg, new(int64(o.Quality)), "image/jpeg"
	}
	s.Width, s.Height = width, height
	switch {
	case o.Ref != "":
		n, err := t.ref(ctx, o.Ref)
		if err != nil {
			return err
		}
		clip, err := elementClip(ctx, n)
		if err != nil {
			return err
		}
		p.Clip, p.CaptureBeyondViewport = clip, new(true)
		s.Width, s.Height = int(clip.Width), int(clip.Height)
	case o.scale > 0 && o.scale < 1:
		clip, err := viewClip(ctx, width, height, o.scale)
		if err != nil {
			return err
		}
		p.Clip = clip
		s.Width, s.Height = int(math.Round(clip.Width*o.scale)), int(math.Round(clip.Height*o.scale))
	case o.FullPage:
		lm, err := chromedp.Call(ctx, page.GetLayoutMetrics, cdp.Empty{})
		if err != nil {
			return err
		}
		if cs := lm.CSSContentSize; cs != nil {
			p.Clip = &page.Viewport{Width: math.Max(cs.Width, float64(width)), Height: math.Min(cs.Height, 16000), Scale: 1}
			p.CaptureBeyondViewport = new(true)
			s.Width, s.Height = int(p.Clip.Width), int(p.Clip.Height)
		}
	}
	res, err := chromedp.Call(ctx, page.CaptureScreenshot, p)
	if err != nil {
		return err
	}
	s.Image = res.Data
	return nil
}

// afterCall is the context that puts a page back as a call found it (its size, its masked
// fields) once the call is over: the call's end does not stop it, the tab's closing does, and it
// waits restoreWait at most, so a tab that went away cannot keep it, and the tab's lock, forever.
func afterCall(ctx context.Context, t *tab) (context.Context, context.CancelFunc) {
	c, cancel := context.WithTimeout(context.WithoutCancel(ctx), restoreWait)
	tctx := t.context()
	if tctx == nil {
		return c, cancel
	}
	stop := context.AfterFunc(tctx, cancel)
	return c, func() { stop(); cancel() }
}

const restoreWait = 3 * time.Second

// elementClip is the element's box on the page, scrolled into view.
func elementClip(ctx context.Context, n cdp.BackendNodeID) (*page.Viewport, error) {
	if _, err := chromedp.Call(ctx, dom.ScrollIntoViewIfNeeded, dom.ScrollIntoViewIfNeededParams{BackendNodeID: n}); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrNoRef, err)
	}
	box, err := chromedp.Call(ctx, dom.GetBoxModel, dom.GetBoxModelParams{BackendNodeID: n})
	if err != nil || box.Model == nil || len(box.Model.Border) < 8 {
		return nil, fmt.Errorf("%w: the element has no box", ErrNoRef)
	}
	q := box.Model.Border
	x0, y0 := math.Min(math.Min(q[0], q[2]), math.Min(q[4], q[6])), math.Min(math.Min(q[1], q[3]), math.Min(q[5], q[7]))
	x1, y1 := math.Max(math.Max(q[0], q[2]), math.Max(q[4], q[6])), math.Max(math.Max(q[1], q[3]), math.Max(q[5], q[7]))
	// The box is in the viewport; the clip is in the document.
	lm, err := chromedp.Call(ctx, page.GetLayoutMetrics, cdp.Empty{})
	if err != nil {
		return nil, err
	}
	var sx, sy float64
	if vv := lm.CSSVisualViewport; vv != nil {
		sx, sy = vv.PageX, vv.PageY
	}
	return &page.Viewport{X: x0 + sx, Y: y0 + sy, Width: math.Max(x1-x0, 1), Height: math.Max(y1-y0, 1), Scale: 1}, nil
}
