package node

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ensemblework/ensemble/runtime/ledger"
	"github.com/ensemblework/ensemble/runtime/needs"
)

// A card a routine's run raised expires after 30 minutes with its Needs me mirror, and answering
// it then says so; a card of the owner's own conversation waits on.
func TestBackgroundCardsExpire(t *testing.T) {
	var mu sync.Mutex
	now := time.Now()
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	f := newFixture(t, func(c *Config) { c.Now = clock })
	n := f.node("Scout")
	ctx := context.Background()
	card := func(lane string) Message {
		t.Helper()
		var m Message
		err := f.svc.cfg.Writer.Exec(ctx, func(tx *ledger.Tx) error {
			var err error
			m, err = f.svc.postCardTx(tx, Turn{ID: ledger.NewID("trn_"), NodeID: n.ID, RoomID: n.DMRoomID, Lane: lane, ByOwner: true},
				n, "Send the weekly summary?", Card{Type: "tools"})
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	status := func(id string) Card {
		t.Helper()
		m, err := f.svc.messageIn(ctx, f.st.Reader(), id)
		if err != nil {
			t.Fatal(err)
		}
		var c Card
		json.Unmarshal(m.Data, &c)
		return c
	}
	routine, own := card("work:rtn_weekly:"+n.ID), card(convLane(n.DMRoomID, false))
	gone := card("work:msn_gone:build:" + n.ID)
	f.svc.expireCards(ctx)
	if c := status(gone.ID); c.Status != CardExpired {
		t.Fatalf("the card of a plan step that is gone is %s; want expired at once", c.Status)
	}
	if c := status(routine.ID); c.Status != CardPending || c.ExpiresAt == nil {
		t.Fatalf("a fresh routine card is %s (expires %v); want pending with an expiry", c.Status, c.ExpiresAt)
	}
	mu.Lock()
	now = now.Add(31 * time.Minute)
	mu.Unlock()
	f.svc.expireCards(ctx)
	c := status(routine.ID)
	if c.Status != CardExpired {
		t.Fatalf("after 31 minutes the routine card is %s; want expired", c.Status)
	}
	if d, err := f.needs.Get(ctx, c.DecisionID); err != nil || d.Status != needs.Expired {
		t.Fatalf("its Needs me mirror is %s, %v; want expired", d.Status, err)
	}
	if _, err := f.svc.Answer(ctx, routine.ID, Approve, "browser"); err == nil || !strings.Contains(err.Error(), "expired") {
		t.Fatalf("approving an expired card: %v", err)
	}
	if c := status(own.ID); c.Status != CardPending {
		t.Fatalf("the owner's own card is %s; want pending", c.Status)
	}
}
