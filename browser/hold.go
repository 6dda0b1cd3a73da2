package browser

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/url"
	"regexp"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
)

// holdEvery is how often a held tab is looked at (and after each load).
const holdEvery = 2 * time.Second

// hold is a tab kept for its owner's sign-in or human check.
type hold struct {
	purpose string
	check   SignedInCheck
	since   time.Time
	host    string // the site's host when it was held
	origin  string
	cookies string // the site's cookies then, as a fingerprint
	done    bool   // OnSignIn was told
	quit    chan struct{}
	once    sync.Once
}

func (h *hold) stop() { h.once.Do(func() { close(h.quit) }) }

// Hold makes the tab sensitive and keeps it for its owner until Release.
func (b *Broker) Hold(ctx context.Context, w Work, id, purpose string, check SignedInCheck) error {
	t, err := b.use(w, id, true)
	if err != nil {
		return err
	}
	if purpose == "" {
		purpose = "sign_in"
	}
	p := b.pageOf(ctx, t)
	h := &hold{purpose: purpose, check: check, since: b.cfg.Now(), quit: make(chan struct{})}
	if u, err := url.Parse(p.URL); err == nil && u.Host != "" {
		h.host, h.origin = u.Hostname(), u.Scheme+"://"+u.Host
	}
	if purpose != "human_check" {
		h.cookies = b.cookieMark(ctx, t.context(), h.origin)
	}
	t.mu.Lock()
	old := t.hold
	t.hold = h
	t.mu.Unlock()
	if old != nil {
		old.stop()
	}
	go b.watchHold(t, h)
	b.log.Info("tab held for its owner", "tab", id, "purpose", purpose)
	return nil
}

// cookieMark fingerprints the cookies a browser context sends to origin.
func (b *Broker) cookieMark(ctx context.Context, tctx context.Context, origin string) string {
	if origin == "" || tctx == nil {
		return ""
	}
	var cs []*network.Cookie
	_ = runUnder(ctx, tctx, func(c context.Context) error {
		res, err := chromedp.Call(c, network.GetCookies, network.GetCookiesParams{URLs: []string{origin + "/"}})
		if err == nil {
			cs = res.Cookies
		}
		return err
	})
	return fingerprint(cs)
}

func fingerprint(cs []*network.Cookie) string {
	kv := make([]string, 0, len(cs))
	for _, c := range cs {
		kv = append(kv, c.Domain+"\x00"+c.Path+"\x00"+c.Name+"\x00"+c.Value)
	}
	sort.Strings(kv)
	sum := sha256.Sum256([]byte(strings.Join(kv, "\x01")))
	return hex.EncodeToString(sum[:])
}

// watchHold looks at a held tab every two seconds and after each load until it is seen done,
// given up or released.
func (b *Broker) watchHold(t *tab, h *hold) {
	tick := time.NewTicker(holdEvery)
	defer tick.Stop()
	for {
		select {
		case <-h.quit:
			return
		case <-b.root.Done():
			return
		case <-tick.C:
		case <-t.loaded:
		}
		if b.cfg.Now().Sub(h.since) > HoldLimit {
			b.expire(t, h)
			return
		}
		ctx, cancel := context.WithTimeout(b.root, 20*time.Second)
		done, how := b.checkHold(ctx, t, h)
		cancel()
		if done {
			b.signedIn(t, h, how)
			return
		}
	}
}

// expire gives a hold up at HoldLimit and closes its tab.
func (b *Broker) expire(t *tab, h *hold) {
	b.tell(t, h, false, "expired")
	b.closeTab(t)
}

// tell calls OnSignIn once per hold.
func (b *Broker) tell(t *tab, h *hold, ok bool, how string) bool {
	t.mu.Lock()
	first := !h.done && t.hold == h
	h.done = true
	t.mu.Unlock()
	if first && b.cfg.OnSignIn != nil {
		b.cfg.OnSignIn(t.work, t.id, ok, how)
	}
	return first
}

// signedIn ends a hold seen done; the tab stays held until the runtime releases it.
func (b *Broker) signedIn(t *tab, h *hold, how string) {
	b.log.Info("sign-in seen done", "tab", t.id, "how", how)
	b.tell(t, h, true, how)
}

// checkHold looks once: in the clean browser when it is open, else in the tab.
func (b *Broker) checkHold(ctx context.Context, t *tab, h *hold) (bool, string) {
	if cb := b.cleanOf(t.id); cb != nil {
		if b.cleanDone(ctx, cb, h) {
			if err := b.moveSession(ctx, t, cb); err != nil {
				b.log.Warn("moving the sign-in into the tab failed", "tab", t.id, "err", err)
				return false, ""
			}
			return true, "clean"
		}
		return false, ""
	}
	return b.tabDone(ctx, t, h), "tab"
}

// tabDone: the page is the site with no sign-in form or challenge left, and (for a sign-in)
// the site's cookies changed since the hold.
func (b *Broker) tabDone(ctx context.Context, t *tab, h *hold) bool {
	t.mu.Lock()
	loading := t.loading
	t.mu.Unlock()
	if loading {
		return false
	}
	f, err := b.facts(ctx, t)
	if err != nil {
		return false
	}
	if h.purpose == "human_check" {
		s := decideSignIn(f, false)
		return s == nil || s.Purpose != "human_check"
	}
	if !b.pageSignedIn(ctx, t, h, f) {
		return false
	}
	return b.cookieMark(ctx, t.context(), h.origin) != h.cookies
}

// pageSignedIn applies the hold's SignedInCheck, or the default one, to the page facts.
func (b *Broker) pageSignedIn(ctx context.Context, t *tab, h *hold, f pageFacts) bool {
	if h.check.URLPattern != "" && !urlMatches(h.check.URLPattern, f.URL) {
		return false
	}
	if h.check.Selector != "" {
		var found bool
		_ = runUnder(ctx, t.context(), func(c context.Context) error {
			var err error
			found, err = chromedp.Run(c, chromedp.Evaluate[bool](fmt.Sprintf(`!!document.querySelector(%q)`, h.check.Selector)))
			return err
		})
		return found
	}
	if h.check.URLPattern != "" {
		return true
	}
	u, err := url.Parse(f.URL)
	if err != nil || !sameSite(u.Hostname(), h.host) {
		return false
	}
	s := decideSignIn(f, false)
	return f.Passwords == 0 && f.CodeFields == 0 && (s == nil || s.Purpose != "human_check")
}

// urlMatches: a pattern with * matches as a glob, else as a substring.
func urlMatches(pattern, u string) bool {
	if !strings.Contains(pattern, "*") {
		return strings.Contains(u, pattern)
	}
	parts := strings.Split(pattern, "*")
	for i, p := range parts {
		parts[i] = regexp.QuoteMeta(p)
	}
	re, err := regexp.Compile("^" + strings.Join(parts, ".*") + "$")
	return err == nil && re.MatchString(u)
}

// sameSite compares the last two labels of two hosts (app.example.com ~ example.com).
func sameSite(a, b string) bool {
	if a == b {
		return true
	}
	tail := func(h string) string {
		l := strings.Split(h, ".")
		if len(l) <= 2 {
			return h
		}
		return strings.Join(l[len(l)-2:], ".")
	}
	return b != "" && tail(a) == tail(b)
}

// Release gives a held tab back; clear leaves it at about:blank.
func (b *Broker) Release(ctx context.Context, w Work, id string, clear bool) error {
	t, err := b.use(w, id, true)
	if err != nil {
		return err
	}
	b.closeClean(id)
	t.mu.Lock()
	h := t.hold
	t.hold = nil
	t.mu.Unlock()
	if h != nil {
		h.stop()
	}
	if clear {
		t.act.Lock()
		defer t.act.Unlock()
		return b.load(ctx, t, "about:blank")
	}
	return nil
}

// heldTab is one of w's tabs that waits for a sign-in, and its hold.
func (b *Broker) heldTab(w Work, id string) (*tab, *hold, error) {
	t, err := b.use(w, id, true)
	if err != nil {
		return nil, nil, err
	}
	t.mu.Lock()
	h := t.hold
	t.mu.Unlock()
	if h == nil {
		return nil, nil, fmt.Errorf("tab %s is not waiting for a sign-in", id)
	}
	return t, h, nil
}

// CheckSignIn checks a held tab now.
func (b *Broker) CheckSignIn(ctx context.Context, w Work, id string) (bool, error) {
	t, h, err := b.heldTab(w, id)
	if err != nil {
		return false, err
	}
	if h.done {
		return true, nil
	}
	done, how := b.checkHold(ctx, t, h)
	if done {
		b.signedIn(t, h, how)
		h.stop()
	}
	return done, nil
}

// reopenLimit: a held page that keeps closing itself is let go after this many reopens in
// reopenWindow.
const (
	reopenLimit  = 3
	reopenWindow = 10 * time.Minute
)

// reopen opens a held tab again under its id at the page it showed, still held.
// dead is the page context that ended; a tab already on another one is left alone.
func (b *Broker) reopen(t *tab, dead context.Context) {
	t.act.Lock()
	defer t.act.Unlock()
	now := b.cfg.Now()
	t.mu.Lock()
	if t.ctx != dead || t.closing {
		t.mu.Unlock()
		return
	}
	recent := t.reopens[:0]
	for _, at := range t.reopens {
		if now.Sub(at) < reopenWindow {
			recent = append(recent, at)
		}
	}
	t.reopens = append(recent, now)
	tooMany := len(t.reopens) > reopenLimit
	u := t.url
	h := t.hold
	t.mu.Unlock()
	if tooMany || h == nil {
		b.log.Warn("held tab let go: it keeps closing", "tab", t.id)
		if h != nil {
			b.tell(t, h, false, "closed")
		}
		b.closeTab(t)
		return
	}
	ctx, cancel := context.WithTimeout(b.root, time.Minute)
	defer cancel()
	b.mu.Lock()
	if b.tabs[t.id] != t {
		b.tabs[t.id] = t // Chromium's death forgot it: the id is still this tab's
	}
	b.mu.Unlock()
	if err := b.attachNew(ctx, t); err != nil {
		b.log.Warn("reopening a held tab failed", "tab", t.id, "err", err)
		return
	}
	if u == "" {
		u = "about:blank"
	}
	if err := b.load(ctx, t, u); err != nil {
		b.log.Warn("reloading a held tab failed", "tab", t.id, "err", err)
	}
	b.log.Info("held tab reopened", "tab", t.id)
}
