package browser

import (
	"context"
	"fmt"
	"net/url"

	"github.com/chromedp/chromedp"

	"github.com/ensemblework/ensemble/browser/extract"
)

// Extract reads the tab's page as Markdown with its tables and products.
func (b *Broker) Extract(ctx context.Context, w Work, id string) (Extraction, error) {
	t, err := b.use(w, id, false)
	if err != nil {
		return Extraction{}, err
	}
	t.act.Lock()
	defer t.act.Unlock()
	var html, loc string
	err = runUnder(ctx, t.context(), func(c context.Context) error {
		var err error
		if html, err = chromedp.Run(c, chromedp.Evaluate[string](`document.documentElement ? document.documentElement.outerHTML : ""`)); err != nil {
			return err
		}
		loc, err = chromedp.Run(c, chromedp.Evaluate[string](`location.href`))
		return err
	})
	if err != nil {
		return Extraction{}, fmt.Errorf("reading the page: %w", err)
	}
	u, err := url.Parse(loc)
	if err != nil {
		return Extraction{}, err
	}
	r, err := extract.Page([]byte(html), u)
	if err != nil {
		return Extraction{}, fmt.Errorf("extracting the page: %w", err)
	}
	p := b.finish(ctx, t, b.popupMark(), false)
	return Extraction{Page: p, Markdown: r.Markdown, Tables: r.Tables, Products: r.Products}, nil
}
