package browser

import (
	"context"
	"time"

	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"
)

// popupMark is where tab numbering stands before an action: tabs born after it are its doing.
func (b *Broker) popupMark() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.next
}

// watchPopups turns each window a tab's page opens into a tab of the same work.
func (b *Broker) watchPopups(p *proc) {
	_ = chromedp.ListenBrowser(p.ctx, func(ev any) {
		e, ok := ev.(*target.EventTargetCreated)
		if !ok || e.TargetInfo == nil || e.TargetInfo.Type != "page" || e.TargetInfo.OpenerID == "" {
			return
		}
		b.adoptPopup(p, e.TargetInfo)
	})
}

// adoptPopup registers the popup at once (so the action that opened it can name it) and
// attaches to it on a goroutine (the listener must not wait on a command).
func (b *Broker) adoptPopup(p *proc, info *target.Info) {
	b.mu.Lock()
	var opener *tab
	for _, t := range b.tabs {
		t.mu.Lock()
		mine := t.proc == p && t.targetID == info.OpenerID
		t.mu.Unlock()
		if mine {
			opener = t
			break
		}
	}
	if opener == nil {
		b.mu.Unlock()
		return
	}
	t := &tab{
		work: opener.work, owner: opener.owner, private: opener.private, network: opener.network,
		width: opener.width, height: opener.height, lease: opener.lease, popup: true, opener: opener.id,
		ready: make(chan struct{}), url: info.URL,
	}
	t.id = b.newTabID("")
	t.born = b.next
	opener.mu.Lock()
	t.leaseEnds = opener.leaseEnds
	opener.mu.Unlock()
	b.tabs[t.id] = t
	b.mu.Unlock()
	go func() {
		defer close(t.ready)
		ctx, cancel := context.WithTimeout(b.root, 20*time.Second)
		defer cancel()
		if err := b.attachExisting(ctx, t, p, info.TargetID); err != nil {
			b.log.Warn("could not follow a new window", "tab", t.id, "err", err)
			b.forget(t)
			return
		}
		// The window began loading before its interception was on: check where it went.
		if u := b.pageOf(ctx, t).URL; u != "" && u != "about:blank" {
			if err := b.allowed(ctx, t, u); err != nil {
				t.mu.Lock()
				t.neterrs.add(NetError{At: b.cfg.Now(), URL: u, Method: "GET", Error: "refused: " + err.Error(), Type: "Document"})
				t.mu.Unlock()
				t.act.Lock()
				_ = b.load(ctx, t, "about:blank")
				t.act.Unlock()
			}
		}
		b.log.Info("followed a new window", "tab", t.id, "openedBy", t.opener)
	}()
}

// popupsOf lists the windows opened from t's group since mark, once they are attached.
func (b *Broker) popupsOf(ctx context.Context, t *tab, mark int) []TabInfo {
	b.mu.Lock()
	group := map[string]bool{}
	for _, g := range b.groupLocked(t) {
		group[g.id] = true
	}
	var ps []*tab
	for _, x := range b.tabs {
		if x.popup && x.born > mark && group[x.opener] {
			ps = append(ps, x)
		}
	}
	b.mu.Unlock()
	var out []TabInfo
	for _, x := range ps {
		select {
		case <-x.ready:
		case <-ctx.Done():
		case <-time.After(10 * time.Second):
		}
		b.pageOf(ctx, x)
		out = append(out, x.info())
	}
	return out
}
