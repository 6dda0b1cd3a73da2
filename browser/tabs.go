package browser

import (
	"context"
	"fmt"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"
)

// tab is one page the broker keeps: its id outlives its Chromium target (a held tab reopens).
type tab struct {
	id      string
	work    Work
	owner   string
	private bool
	network Network
	width   int
	height  int
	lease   time.Duration
	popup   bool
	opener  string        // the tab id of the page that opened this one
	ready   chan struct{} // a popup's: closed once attached

	act sync.Mutex // one action at a time on a page

	mu        sync.Mutex
	proc      *proc
	ctx       context.Context // the chromedp context of its target
	cancel    context.CancelFunc
	targetID  target.ID
	url       string
	title     string
	status    int
	loading   bool
	inflight  map[string]bool
	lastNet   time.Time
	snap      runtime.RemoteObjectID // the elements of the last snapshot, e1 first
	nrefs     int
	reqs      map[string]reqInfo
	console   ring[ConsoleEntry]
	neterrs   ring[NetError]
	loaded    chan struct{} // signalled (not closed) on each load, for the sign-in watcher
	leaseEnds time.Time
	born      int // order of creation, for Page.Popups
	closing   bool
	refusal   error // why the policy last refused a document

	hold    *hold // non-nil while held for the owner
	reopens []time.Time
}

func (t *tab) info() TabInfo {
	t.mu.Lock()
	defer t.mu.Unlock()
	ti := TabInfo{ID: t.id, Work: t.work, URL: t.url, Title: t.title, Private: t.private, Popup: t.popup, OpenedBy: t.opener, LeaseEnds: t.leaseEnds}
	if t.hold != nil {
		ti.Held = true
		ti.Sensitive = t.hold.purpose
	}
	return ti
}

func (t *tab) context() context.Context {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.ctx
}

// held reports whether the tab waits for its owner.
func (t *tab) isHeld() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.hold != nil
}

// newTabID takes the next free id, or want when it is free.
func (b *Broker) newTabID(want string) string {
	if want != "" {
		if _, used := b.tabs[want]; !used {
			if n, err := strconv.Atoi(strings.TrimPrefix(want, "t")); err == nil && n > b.next {
				b.next = n
			}
			return want
		}
	}
	for {
		b.next++
		id := "t" + strconv.Itoa(b.next)
		if _, used := b.tabs[id]; !used {
			return id
		}
	}
}

// procForTab is the Chromium a tab lives in: its owner's profile, or the private one.
// It shows windows when the computer has a screen and the broker is not told to be headless.
func (b *Broker) procForTab(ctx context.Context, t *tab) (*proc, error) {
	visible := hasDisplay() && !b.cfg.Headless
	if t.private {
		return b.procFor(ctx, "private", filepath.Join(b.cfg.DataDir, "private"), visible)
	}
	return b.procFor(ctx, "owner:"+t.owner, filepath.Join(b.cfg.DataDir, "profiles", sanitize(t.owner)), visible)
}

// Open opens a tab at o.URL.
func (b *Broker) Open(ctx context.Context, o OpenOptions) (Page, error) {
	if o.URL == "" {
		o.URL = "about:blank"
	}
	if o.Width <= 0 || o.Height <= 0 {
		o.Width, o.Height = 1280, 800
	}
	if o.Lease <= 0 {
		o.Lease = TabLease
	}
	t := &tab{work: o.Work, owner: o.Owner, private: o.Private, network: o.Network, width: o.Width, height: o.Height, lease: o.Lease}
	if err := b.allowed(ctx, t, o.URL); err != nil {
		return Page{}, err
	}
	b.mu.Lock()
	t.id = b.newTabID(o.Tab)
	t.born = b.next
	t.leaseEnds = b.cfg.Now().Add(t.lease)
	b.tabs[t.id] = t
	b.mu.Unlock()
	if err := b.attachNew(ctx, t); err != nil {
		b.forget(t)
		return Page{}, err
	}
	return b.navigate(ctx, t, o.URL)
}

// attachNew makes a target for t in its Chromium and sets it up.
func (b *Broker) attachNew(ctx context.Context, t *tab) error {
	p, err := b.procForTab(ctx, t)
	if err != nil {
		return err
	}
	var opts []chromedp.ContextOption
	if t.private {
		opts = append(opts, chromedp.WithNewBrowserContext())
	}
	tctx, cancel := chromedp.NewContext(p.ctx, opts...)
	if err := startTarget(ctx, tctx); err != nil {
		cancel()
		return fmt.Errorf("opening a tab: %w", err)
	}
	return b.setup(ctx, t, p, tctx, cancel)
}

// attachExisting takes a target Chromium opened by itself (a popup) as t's page.
func (b *Broker) attachExisting(ctx context.Context, t *tab, p *proc, id target.ID) error {
	tctx, cancel := chromedp.NewContext(p.ctx, chromedp.WithTargetID(id))
	if err := startTarget(ctx, tctx); err != nil {
		cancel()
		return fmt.Errorf("following a new window: %w", err)
	}
	return b.setup(ctx, t, p, tctx, cancel)
}

// startTarget attaches tctx's target. It must run on tctx itself, not a child: chromedp runs
// the target's event loop under the context of this first call.
func startTarget(ctx, tctx context.Context) error {
	done := make(chan error, 1)
	go func() { done <- chromedp.Do(tctx) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// runUnder runs f on the tab's context while honouring the caller's ctx, which the tab's
// context does not descend from (the tab outlives the call).
func runUnder(ctx, tctx context.Context, f func(context.Context) error) error {
	c, cancel := context.WithCancel(tctx)
	defer cancel()
	stop := context.AfterFunc(ctx, cancel)
	defer stop()
	err := f(c)
	if err != nil && ctx.Err() != nil {
		return ctx.Err()
	}
	return err
}

// setup presents the page as Chrome, sizes it, installs the address policy and the listeners.
func (b *Broker) setup(ctx context.Context, t *tab, p *proc, tctx context.Context, cancel context.CancelFunc) error {
	c := chromedp.FromContext(tctx)
	t.mu.Lock()
	t.proc, t.ctx, t.cancel, t.targetID = p, tctx, cancel, c.Target.TargetID
	t.inflight = map[string]bool{}
	t.reqs = map[string]reqInfo{}
	t.snap, t.nrefs = "", 0
	if t.loaded == nil {
		t.loaded = make(chan struct{}, 1)
	}
	t.mu.Unlock()
	if err := chromedp.Listen(tctx, func(ev any) { b.onEvent(t, tctx, ev) }); err != nil {
		cancel()
		return err
	}
	err := runUnder(ctx, tctx, func(c context.Context) error {
		if err := presentAsChrome(c, p); err != nil {
			return err
		}
		if err := b.viewport(c, t.width, t.height); err != nil {
			return err
		}
		return b.intercept(c, t)
	})
	if err != nil {
		cancel()
		return fmt.Errorf("setting up a tab: %w", err)
	}
	go b.watchTarget(t, tctx)
	return nil
}

// viewport sets the page's size; narrow ones are phones.
func (b *Broker) viewport(ctx context.Context, w, h int) error {
	mobile := w < 600
	scale := 1.0
	if mobile {
		scale = 2
	}
	_, err := chromedp.Call(ctx, emulation.SetDeviceMetricsOverride, emulation.SetDeviceMetricsOverrideParams{
		Width: int64(w), Height: int64(h), DeviceScaleFactor: scale, Mobile: mobile, ScreenWidth: int64(w), ScreenHeight: int64(h),
	})
	if err != nil {
		return err
	}
	_, err = chromedp.Call(ctx, emulation.SetTouchEmulationEnabled, emulation.SetTouchEmulationEnabledParams{Enabled: mobile})
	return err
}

// watchTarget notices a page that closed without the broker closing it: a held tab opens
// again, any other is forgotten.
func (b *Broker) watchTarget(t *tab, tctx context.Context) {
	gone, err := chromedp.Detached(tctx)
	if err != nil {
		return
	}
	select {
	case <-tctx.Done():
		return
	case <-gone:
	}
	t.mu.Lock()
	mine := t.ctx == tctx && !t.closing
	held := t.hold != nil
	procAlive := t.proc != nil && t.proc.alive()
	t.mu.Unlock()
	if !mine || !procAlive {
		return // closed on purpose, or the whole Chromium went (watchProc handles that)
	}
	if held {
		b.reopen(t, tctx)
		return
	}
	b.forget(t)
}

// forget drops a tab without touching its page.
func (b *Broker) forget(t *tab) {
	b.mu.Lock()
	if b.tabs[t.id] == t {
		delete(b.tabs, t.id)
	}
	b.mu.Unlock()
}

// use finds w's tab and renews its lease (and its popup group's); a sensitive tab is refused
// unless the action may touch it.
func (b *Broker) use(w Work, id string, sensitiveOK bool) (*tab, error) {
	b.mu.Lock()
	t := b.tabs[id]
	b.mu.Unlock()
	if t != nil && t.ready != nil {
		// A popup being attached: wait for it rather than act on no page.
		select {
		case <-t.ready:
		case <-time.After(20 * time.Second):
		}
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if err := b.mayUseLocked(t, w, id, sensitiveOK); err != nil {
		return nil, err
	}
	ends := b.cfg.Now().Add(t.lease)
	for _, g := range b.groupLocked(t) {
		g.mu.Lock()
		if ends.After(g.leaseEnds) {
			g.leaseEnds = ends
		}
		g.mu.Unlock()
	}
	return t, nil
}

// mayUseLocked says whether w may use t, found under id: it is still open, w's, and not held
// for its owner unless sensitiveOK.
func (b *Broker) mayUseLocked(t *tab, w Work, id string, sensitiveOK bool) error {
	switch {
	case t == nil || b.tabs[id] != t || t.context() == nil:
		return fmt.Errorf("%w: %s", ErrNoTab, id)
	case t.work != w:
		return fmt.Errorf("%w: %s", ErrNotYours, id)
	case !sensitiveOK && t.isHeld():
		return fmt.Errorf("%w: %s", ErrSensitive, id)
	}
	return nil
}

// groupLocked is t with its opener chain and every popup of them: they share one lease.
func (b *Broker) groupLocked(t *tab) []*tab {
	root := t
	for root.opener != "" {
		o := b.tabs[root.opener]
		if o == nil {
			break
		}
		root = o
	}
	var out []*tab
	for _, x := range b.tabs {
		r := x
		for r.opener != "" && b.tabs[r.opener] != nil {
			r = b.tabs[r.opener]
		}
		if r == root {
			out = append(out, x)
		}
	}
	return out
}

// tabsOf is w's tabs, in no order.
func (b *Broker) tabsOf(w Work) []*tab {
	b.mu.Lock()
	defer b.mu.Unlock()
	var ts []*tab
	for _, t := range b.tabs {
		if t.work == w {
			ts = append(ts, t)
		}
	}
	return ts
}

// Tabs lists w's tabs.
func (b *Broker) Tabs(w Work) []TabInfo {
	ts := b.tabsOf(w)
	out := make([]TabInfo, 0, len(ts))
	for _, t := range ts {
		out = append(out, t.info())
	}
	sort.Slice(out, func(i, j int) bool { return tabNum(out[i].ID) < tabNum(out[j].ID) })
	return out
}

func tabNum(id string) int {
	n, _ := strconv.Atoi(strings.TrimPrefix(id, "t"))
	return n
}

// CloseTab closes one of w's tabs, held or not.
func (b *Broker) CloseTab(ctx context.Context, w Work, id string) error {
	t, err := b.use(w, id, true)
	if err != nil {
		return err
	}
	b.closeTab(t)
	return nil
}

// CloseWork closes every tab of w.
func (b *Broker) CloseWork(ctx context.Context, w Work) error {
	ts := b.tabsOf(w)
	for _, t := range ts {
		b.closeTab(t)
	}
	return nil
}

// closeTab ends a tab's page (a private one's context with it) and its hold.
func (b *Broker) closeTab(t *tab) {
	b.forget(t)
	b.closeClean(t.id)
	t.mu.Lock()
	t.closing = true
	cancel := t.cancel
	if t.hold != nil {
		t.hold.stop()
		t.hold = nil
	}
	t.mu.Unlock()
	if cancel != nil {
		cancel()
	}
}

// pageOf is what the tab shows now.
func (b *Broker) pageOf(ctx context.Context, t *tab) Page {
	var c *chromedp.Context
	if tctx := t.context(); tctx != nil {
		c = chromedp.FromContext(tctx)
	}
	if c != nil && c.Browser != nil {
		cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		info, err := cdp.Call(cctx, c.Browser, target.GetTargetInfo, target.GetTargetInfoParams{TargetID: t.targetID})
		cancel()
		if err == nil && info.TargetInfo != nil {
			t.mu.Lock()
			t.url, t.title = info.TargetInfo.URL, info.TargetInfo.Title
			t.mu.Unlock()
		}
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	return Page{Tab: t.id, URL: t.url, Title: t.title, Status: t.status}
}
