package browser

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"strings"
	"time"

	"github.com/chromedp/cdproto/fetch"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
)

// allowed says whether tab t may load u: the scheme, the runtime's refusals, the tab's network.
func (b *Broker) allowed(ctx context.Context, t *tab, u string) error {
	if u == "about:blank" {
		return nil
	}
	pu, err := url.Parse(u)
	if err != nil || pu.Host == "" || (pu.Scheme != "http" && pu.Scheme != "https") {
		return fmt.Errorf("%w: only http, https and about:blank open (%.80s)", ErrRefused, u)
	}
	if b.cfg.Refuse != nil {
		if why := b.cfg.Refuse(u); why != "" {
			return fmt.Errorf("%w: %s", ErrRefused, why)
		}
	}
	if t.network == LocalOnly {
		if !isLocalHost(ctx, pu.Hostname()) {
			return fmt.Errorf("%w: the internet is off for this tab; only this computer's own addresses open", ErrRefused)
		}
	}
	return nil
}

// isLocalHost says whether every address host names is this computer's own.
func isLocalHost(ctx context.Context, host string) bool {
	if host == "" {
		return false
	}
	if strings.EqualFold(host, "localhost") || strings.HasSuffix(strings.ToLower(host), ".localhost") {
		return true
	}
	if a, err := netip.ParseAddr(strings.Trim(host, "[]")); err == nil {
		return isOwnAddr(a)
	}
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	ips, err := net.DefaultResolver.LookupNetIP(ctx, "ip", host)
	if err != nil || len(ips) == 0 {
		return false
	}
	for _, a := range ips {
		if !isOwnAddr(a) {
			return false
		}
	}
	return true
}

// isOwnAddr: loopback, or an address of one of this computer's interfaces.
func isOwnAddr(a netip.Addr) bool {
	a = a.Unmap()
	if a.IsLoopback() {
		return true
	}
	if a.IsUnspecified() || a.IsMulticast() {
		return false
	}
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return false
	}
	for _, ad := range addrs {
		if p, err := netip.ParsePrefix(ad.String()); err == nil && p.Addr().Unmap() == a {
			return true
		}
	}
	return false
}

// intercept pauses the requests the tab's policy must see: every request when the internet
// is off, else only documents (a redirect to a refused origin), and none without a Refuse.
func (b *Broker) intercept(ctx context.Context, t *tab) error {
	var pats []*fetch.RequestPattern
	switch {
	case t.network == LocalOnly:
		pats = []*fetch.RequestPattern{{URLPattern: "*"}}
	case b.cfg.Refuse != nil:
		pats = []*fetch.RequestPattern{{URLPattern: "*", ResourceType: network.ResourceTypeDocument}}
	default:
		return nil
	}
	_, err := chromedp.Call(ctx, fetch.Enable, fetch.EnableParams{Patterns: pats})
	return err
}

// onPaused decides one paused request. It runs on its own goroutine: the event loop must not
// wait on a command.
func (b *Broker) onPaused(t *tab, tctx context.Context, ev *fetch.EventRequestPaused) {
	ctx, cancel := context.WithTimeout(tctx, 10*time.Second)
	defer cancel()
	u := ev.Request.URL
	if strings.HasPrefix(u, "data:") || strings.HasPrefix(u, "blob:") {
		_, _ = chromedp.Call(ctx, fetch.ContinueRequest, fetch.ContinueRequestParams{RequestID: ev.RequestID})
		return
	}
	if err := b.allowed(ctx, t, u); err != nil {
		b.log.Info("request refused", "tab", t.id, "type", string(ev.ResourceType))
		if ev.ResourceType == network.ResourceTypeDocument {
			t.mu.Lock()
			t.refusal = err
			t.mu.Unlock()
		}
		_, _ = chromedp.Call(ctx, fetch.FailRequest, fetch.FailRequestParams{RequestID: ev.RequestID, ErrorReason: network.ErrorReasonBlockedByClient})
		return
	}
	_, _ = chromedp.Call(ctx, fetch.ContinueRequest, fetch.ContinueRequestParams{RequestID: ev.RequestID})
}
