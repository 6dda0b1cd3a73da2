package browser

import "time"

// janitorEvery is how often lapsed tabs are looked for.
const janitorEvery = 30 * time.Second

// janitor closes lapsed tabs until the broker closes.
func (b *Broker) janitor() {
	tick := time.NewTicker(janitorEvery)
	defer tick.Stop()
	for {
		select {
		case <-b.root.Done():
			return
		case <-tick.C:
			b.sweep()
		}
	}
}

// sweep is one janitor pass: a tab closes when its group's leases have all lapsed and none of
// it is held, or when it has been held past HoldLimit.
func (b *Broker) sweep() {
	now := b.cfg.Now()
	b.mu.Lock()
	var lapsed []*tab
	for _, t := range b.tabs {
		if b.lapsedLocked(t, now) {
			lapsed = append(lapsed, t)
		}
	}
	b.mu.Unlock()
	for _, t := range lapsed {
		t.mu.Lock()
		h := t.hold
		t.mu.Unlock()
		if h != nil {
			b.expire(t, h)
			continue
		}
		b.log.Info("tab lease lapsed", "tab", t.id)
		b.closeTab(t)
	}
}

func (b *Broker) lapsedLocked(t *tab, now time.Time) bool {
	t.mu.Lock()
	h := t.hold
	t.mu.Unlock()
	if h != nil {
		return now.Sub(h.since) > HoldLimit
	}
	for _, g := range b.groupLocked(t) {
		g.mu.Lock()
		keep := g.hold != nil || now.Before(g.leaseEnds)
		g.mu.Unlock()
		if keep {
			return false
		}
	}
	return true
}
