package node

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/ensemblework/ensemble/runtime/events"
)

// A follower the bus drops for falling behind follows again: an event after the burst still
// reaches it, and its catch-up runs again.
func TestOnBusFollowsAgainAfterFallingBehind(t *testing.T) {
	f := newFixture(t)
	block := make(chan struct{})
	var marks, catchUps atomic.Int32
	f.svc.onBus(4, "a test follower", func(ctx context.Context) { catchUps.Add(1) }, func(ev events.Event) {
		if ev.Kind == "test.block" {
			<-block
		}
		if ev.Kind == "test.mark" {
			marks.Add(1)
		}
	})
	f.bus.Publish(events.Event{Kind: "test.block"})
	for i := 0; i < 64; i++ {
		f.bus.Publish(events.Event{Kind: "test.burst"})
	}
	close(block)
	f.waitFor("the follower to follow again", func() bool { return catchUps.Load() >= 2 })
	f.bus.Publish(events.Event{Kind: "test.mark"})
	f.waitFor("the event after the burst", func() bool { return marks.Load() == 1 })
}
