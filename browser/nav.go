package browser

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
)

// Navigate loads url in w's tab.
func (b *Broker) Navigate(ctx context.Context, w Work, id, u string) (Page, error) {
	t, err := b.use(w, id, false)
	if err != nil {
		return Page{}, err
	}
	if err := b.allowed(ctx, t, u); err != nil {
		return Page{}, err
	}
	return b.navigate(ctx, t, u)
}

// navigate loads u and waits for it, then looks for a sign-in.
func (b *Broker) navigate(ctx context.Context, t *tab, u string) (Page, error) {
	t.act.Lock()
	defer t.act.Unlock()
	before := b.popupMark()
	if err := b.load(ctx, t, u); err != nil {
		return Page{}, err
	}
	return b.finish(ctx, t, before, true), nil
}

// load loads u in t and waits for it; the caller holds t.act.
func (b *Broker) load(ctx context.Context, t *tab, u string) error {
	tctx := t.context()
	t.mu.Lock()
	t.status, t.refusal = 0, nil
	t.mu.Unlock()
	err := runUnder(ctx, tctx, func(c context.Context) error {
		c, cancel := context.WithTimeout(c, 45*time.Second)
		defer cancel()
		res, err := chromedp.Call(c, page.Navigate, page.NavigateParams{URL: u})
		if err != nil {
			return err
		}
		if res.ErrorText != "" {
			return fmt.Errorf("%w: %s", chromedp.ErrPageLoad, res.ErrorText)
		}
		return b.waitLoaded(c, t)
	})
	if err != nil {
		t.mu.Lock()
		refused := t.refusal
		t.mu.Unlock()
		if refused != nil && errors.Is(err, chromedp.ErrPageLoad) {
			return refused
		}
		return fmt.Errorf("opening %.100s: %w", u, err)
	}
	return nil
}

// waitLoaded waits for the main frame to stop loading (polling: the flag comes from events).
func (b *Broker) waitLoaded(ctx context.Context, t *tab) error {
	tick := time.NewTicker(30 * time.Millisecond)
	defer tick.Stop()
	// The started event can come just after Navigate answers.
	grace := time.Now().Add(150 * time.Millisecond)
	for {
		t.mu.Lock()
		loading := t.loading
		t.mu.Unlock()
		if !loading && time.Now().After(grace) {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
	}
}

// settle waits briefly after an action for what it started: a navigation, requests, a popup.
// It never fails: a page still busy after a few seconds is reported as it is.
func (b *Broker) settle(ctx context.Context, t *tab) {
	deadline := time.Now().Add(5 * time.Second)
	quietSince := time.Time{}
	tick := time.NewTicker(25 * time.Millisecond)
	defer tick.Stop()
	start := time.Now()
	for time.Now().Before(deadline) {
		t.mu.Lock()
		busy := t.loading || len(t.inflight) > 0
		t.mu.Unlock()
		switch {
		case busy:
			quietSince = time.Time{}
		case quietSince.IsZero():
			quietSince = time.Now()
		case time.Since(quietSince) > 120*time.Millisecond && time.Since(start) > 200*time.Millisecond:
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// finish is the Page an action leaves: what the tab shows, the windows it opened, a sign-in.
func (b *Broker) finish(ctx context.Context, t *tab, popupsSince int, detect bool) Page {
	p := b.pageOf(ctx, t)
	p.Popups = b.popupsOf(ctx, t, popupsSince)
	if detect && p.URL != "" && p.URL != "about:blank" {
		if f, err := b.facts(ctx, t); err == nil {
			p.SignIn = decideSignIn(f, t.private)
		}
	}
	if n := len(p.Popups); n > 0 {
		p.Note = fmt.Sprintf("It opened a new window %s (%s): use tab %s.", p.Popups[0].ID, p.Popups[0].Title, p.Popups[0].ID)
	}
	return p
}
