package browser

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"path/filepath"
	"sync"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/dom"
	"github.com/chromedp/cdproto/domstorage"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	cdpruntime "github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/cdproto/storage"
	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"
)

// cleanBrowser is the owner's real-input Chromium for one held tab's sign-in. No page script
// ever runs in it: it is driven with Input events, read with the screen and the DOM, Network,
// Storage and DOMStorage domains.
//
// chromedp's attach to a page enables the Runtime domain and evaluates `self` once to tell a
// worker from a page (the first page is attached while it is still about:blank, a popup as it
// is created); the broker then disables the Runtime domain again.
type cleanBrowser struct {
	tab     string
	proc    *proc
	visible bool
	host    string
	origin  string
	cookies string // the clean profile's cookies for the site when it opened

	mu     sync.Mutex
	pages  []cleanPage // the page shown last: popups on top
	landed string      // where the sign-in ended, once seen done: the tab goes on from there
}

type cleanPage struct {
	ctx    context.Context
	cancel context.CancelFunc
	id     target.ID
	popup  bool
}

// active is the page the owner sees: the newest window still open.
func (cb *cleanBrowser) active() (cleanPage, bool) {
	cb.mu.Lock()
	defer cb.mu.Unlock()
	for len(cb.pages) > 0 {
		p := cb.pages[len(cb.pages)-1]
		if p.ctx.Err() == nil {
			if gone, err := chromedp.Detached(p.ctx); err == nil {
				select {
				case <-gone:
				default:
					return p, true
				}
			}
		}
		cb.pages = cb.pages[:len(cb.pages)-1]
	}
	return cleanPage{}, false
}

func (b *Broker) cleanOf(id string) *cleanBrowser {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.clean[id]
}

// OpenClean opens the clean browser at a held tab's page.
func (b *Broker) OpenClean(ctx context.Context, w Work, id string) (bool, error) {
	t, h, err := b.heldTab(w, id)
	if err != nil {
		return false, err
	}
	if cb := b.cleanOf(id); cb != nil {
		return cb.visible, nil
	}
	visible := hasDisplay() && !b.cfg.Headless
	owner := t.owner
	if t.private {
		owner = "private-" + string(t.work)
	}
	p, err := b.procFor(ctx, "clean:"+sanitize(owner), filepath.Join(b.cfg.DataDir, "signin", sanitize(owner)), visible)
	if err != nil {
		return false, err
	}
	cb := &cleanBrowser{tab: id, proc: p, visible: visible, host: h.host, origin: h.origin}
	// A page of its own, opened while about:blank (chromedp's attach asks it one question).
	pctx, pcancel := chromedp.NewContext(p.ctx)
	if err := startTarget(ctx, pctx); err != nil {
		pcancel()
		p.stop()
		return false, fmt.Errorf("opening the clean browser: %w", err)
	}
	cb.pages = []cleanPage{{ctx: pctx, cancel: pcancel, id: chromedp.FromContext(pctx).Target.TargetID}}
	pageURL := b.pageOf(ctx, t).URL
	err = runUnder(ctx, pctx, func(c context.Context) error {
		if err := quiet(c); err != nil {
			return err
		}
		if p.headless {
			if err := presentAsChrome(c, p); err != nil {
				return err
			}
			if err := b.viewport(c, t.width, t.height); err != nil {
				return err
			}
		}
		cb.cookies = cleanCookieMark(c, cb.origin)
		c, cancel := context.WithTimeout(c, 30*time.Second)
		defer cancel()
		loads := chromedp.Events(c, page.LoadEventFired)
		if _, err := chromedp.Call(c, page.Navigate, page.NavigateParams{URL: pageURL}); err != nil {
			return err
		}
		for _, err := range loads {
			return err
		}
		return nil
	})
	if err != nil {
		p.stop()
		return false, fmt.Errorf("opening the clean browser: %w", err)
	}
	go b.followCleanPopups(cb)
	b.mu.Lock()
	b.clean[id] = cb
	b.mu.Unlock()
	b.log.Info("clean browser opened", "tab", id, "visible", visible)
	return visible, nil
}

// followCleanPopups puts each window the clean page opens (a "Sign in with Google") on top.
func (b *Broker) followCleanPopups(cb *cleanBrowser) {
	_ = chromedp.ListenBrowser(cb.proc.ctx, func(ev any) {
		e, ok := ev.(*target.EventTargetCreated)
		if !ok || e.TargetInfo == nil || e.TargetInfo.Type != "page" || e.TargetInfo.OpenerID == "" {
			return
		}
		go func(id target.ID) {
			pctx, cancel := chromedp.NewContext(cb.proc.ctx, chromedp.WithTargetID(id))
			ctx, done := context.WithTimeout(b.root, 20*time.Second)
			defer done()
			if err := startTarget(ctx, pctx); err != nil {
				cancel()
				return
			}
			_ = runUnder(ctx, pctx, func(c context.Context) error {
				if err := quiet(c); err != nil {
					return err
				}
				if cb.proc.headless {
					return presentAsChrome(c, cb.proc)
				}
				return nil
			})
			cb.mu.Lock()
			cb.pages = append(cb.pages, cleanPage{ctx: pctx, cancel: cancel, id: id, popup: true})
			cb.mu.Unlock()
		}(e.TargetInfo.TargetID)
	})
}

// quiet turns off the Runtime domain chromedp's attach enabled: a page can notice it (how
// console arguments are serialised), and the clean browser runs no script.
func quiet(ctx context.Context) error {
	_, err := chromedp.Call(ctx, cdpruntime.Disable, cdp.Empty{})
	return err
}

// cleanCookieMark fingerprints the clean browser's cookies for origin.
func cleanCookieMark(ctx context.Context, origin string) string {
	if origin == "" {
		return ""
	}
	res, err := chromedp.Call(ctx, network.GetCookies, network.GetCookiesParams{URLs: []string{origin + "/"}})
	if err != nil {
		return ""
	}
	return fingerprint(res.Cookies)
}

// cleanDone: the clean browser's first page is back on the site, with no password or code
// field (read through the DOM domain, not a script), and the site's cookies changed.
func (b *Broker) cleanDone(ctx context.Context, cb *cleanBrowser, h *hold) bool {
	cb.mu.Lock()
	first := cb.pages[0]
	cb.mu.Unlock()
	var done bool
	_ = runUnder(ctx, first.ctx, func(c context.Context) error {
		info, err := chromedp.CallBrowser(c, target.GetTargetInfo, target.GetTargetInfoParams{TargetID: first.id})
		if err != nil || info.TargetInfo == nil {
			return err
		}
		u, err := url.Parse(info.TargetInfo.URL)
		if err != nil || !sameSite(u.Hostname(), cb.host) {
			return nil
		}
		if h.check.URLPattern != "" && !urlMatches(h.check.URLPattern, info.TargetInfo.URL) {
			return nil
		}
		doc, err := chromedp.Call(c, dom.GetDocument, dom.GetDocumentParams{Depth: new(int64(0))})
		if err != nil {
			return nil
		}
		sel := `input[type=password],input[autocomplete~="one-time-code"]`
		want := false
		if h.check.Selector != "" {
			sel, want = h.check.Selector, true
		}
		q, err := chromedp.Call(c, dom.QuerySelectorAll, dom.QuerySelectorAllParams{NodeID: doc.Root.NodeID, Selector: sel})
		if err != nil || (len(q.NodeIDs) > 0) != want {
			return nil
		}
		done = cleanCookieMark(c, cb.origin) != cb.cookies
		if done {
			cb.mu.Lock()
			cb.landed = info.TargetInfo.URL
			cb.mu.Unlock()
		}
		return nil
	})
	return done
}

// moveSession copies the clean browser's cookies (the site's and the identity providers')
// and the site's local storage into the node tab's browser context, closes the clean browser
// and takes the tab to where the sign-in ended (the site's own page after its form: reloading
// the form would show it again on many sites), or reloads it.
func (b *Broker) moveSession(ctx context.Context, t *tab, cb *cleanBrowser) error {
	cookies, err := chromedp.CallBrowser(cb.proc.ctx, storage.GetCookies, storage.GetCookiesParams{})
	if err != nil {
		return fmt.Errorf("reading the clean browser's cookies: %w", err)
	}
	items := cleanLocalStorage(ctx, cb)
	params := make([]*network.CookieParam, 0, len(cookies.Cookies))
	for _, c := range cookies.Cookies {
		cp := &network.CookieParam{Name: c.Name, Value: c.Value, Domain: c.Domain, Path: c.Path, Secure: c.Secure, HTTPOnly: c.HTTPOnly,
			SameSite: c.SameSite, Priority: c.Priority, SourceScheme: c.SourceScheme, SourcePort: c.SourcePort, PartitionKey: c.PartitionKey}
		if !c.Session {
			cp.Expires = cdp.TimeSinceEpoch(c.Expires)
		}
		params = append(params, cp)
	}
	tctx := t.context()
	bcid := chromedp.FromContext(tctx).BrowserContextID
	if _, err := chromedp.CallBrowser(tctx, storage.SetCookies, storage.SetCookiesParams{Cookies: params, BrowserContextID: bcid}); err != nil {
		return fmt.Errorf("writing the cookies into the tab: %w", err)
	}
	b.closeClean(t.id)
	t.act.Lock()
	defer t.act.Unlock()
	if len(items) > 0 {
		b.writeLocalStorage(ctx, t, cb.origin, items)
	}
	cb.mu.Lock()
	landed := cb.landed
	cb.mu.Unlock()
	err = runUnder(ctx, tctx, func(c context.Context) error {
		var err error
		if landed != "" {
			_, err = chromedp.Call(c, page.Navigate, page.NavigateParams{URL: landed})
		} else {
			_, err = chromedp.Call(c, page.Reload, page.ReloadParams{})
		}
		if err != nil {
			return err
		}
		return b.waitLoaded(c, t)
	})
	b.log.Info("sign-in moved from the clean browser", "tab", t.id, "cookies", len(params), "storage", len(items))
	return err
}

// cleanLocalStorage reads the site's local storage on the clean side (DOMStorage domain).
func cleanLocalStorage(ctx context.Context, cb *cleanBrowser) []domstorage.Item {
	if cb.origin == "" {
		return nil
	}
	cb.mu.Lock()
	first := cb.pages[0]
	cb.mu.Unlock()
	var items []domstorage.Item
	_ = runUnder(ctx, first.ctx, func(c context.Context) error {
		if _, err := chromedp.Call(c, domstorage.Enable, cdp.Empty{}); err != nil {
			return err
		}
		res, err := chromedp.Call(c, domstorage.GetDOMStorageItems, domstorage.GetDOMStorageItemsParams{StorageID: &domstorage.StorageID{SecurityOrigin: cb.origin, IsLocalStorage: true}})
		if err == nil {
			items = res.Entries
		}
		return err
	})
	return items
}

// writeLocalStorage sets the items in the node tab, when it shows the site (a script in the
// node's own tab is allowed; the clean browser never runs one).
func (b *Broker) writeLocalStorage(ctx context.Context, t *tab, origin string, items []domstorage.Item) {
	kv := map[string]string{}
	for _, it := range items {
		if len(it) == 2 {
			kv[it[0]] = it[1]
		}
	}
	js, _ := json.Marshal(kv)
	_ = runUnder(ctx, t.context(), func(c context.Context) error {
		_, err := chromedp.Run(c, chromedp.Evaluate[bool](fmt.Sprintf(
			`(() => { if (location.origin !== %q) return false; const kv = %s; for (const k in kv) localStorage.setItem(k, kv[k]); return true; })()`, origin, js)))
		return err
	})
}

// CloseClean closes the clean browser of a held tab.
func (b *Broker) CloseClean(ctx context.Context, w Work, id string) error {
	if _, err := b.use(w, id, true); err != nil {
		return err
	}
	b.closeClean(id)
	return nil
}

func (b *Broker) closeClean(id string) {
	b.mu.Lock()
	cb := b.clean[id]
	delete(b.clean, id)
	if cb != nil && b.procs[cb.proc.key] == cb.proc {
		delete(b.procs, cb.proc.key)
	}
	b.mu.Unlock()
	if cb == nil {
		return
	}
	cb.mu.Lock()
	for _, p := range cb.pages {
		p.cancel()
	}
	cb.mu.Unlock()
	cb.proc.stop()
	b.log.Info("clean browser closed", "tab", id)
}
