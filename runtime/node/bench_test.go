package node

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime"
	"sort"
	"testing"
	"time"

	"github.com/ensemblework/ensemble/engines/enginetest"
	"github.com/ensemblework/ensemble/runtime/assistant"
	"github.com/ensemblework/ensemble/runtime/ledger"
)

// benchFixture is newFixture for a benchmark: the same parts, with a model that always says hi.
func benchFixture(b *testing.B) *fixture {
	f := newFixture(b)
	f.model.Script(enginetest.Say("Hi.").Forever())
	return f
}

// firstFrame waits for the first text frame of a node's reply in room.
func firstFrame(f *fixture, room string) func() {
	sub := f.bus.Subscribe(1024)
	return func() {
		defer sub.Close()
		for ev := range sub.C {
			if ev.Kind == KindFrame && ev.Subject == room {
				var fr Frame
				json.Unmarshal(ev.Data, &fr)
				if fr.Type == "text" {
					return
				}
			}
		}
	}
}

// BenchmarkFirstToken is a person's message to the first streamed token of the node's reply,
// against the scripted model, beside a bare assistant turn measured in the same run: the node's
// own overhead is the difference (budget: < 20 ms p50).
func BenchmarkFirstToken(b *testing.B) {
	f := benchFixture(b)
	n, err := f.svc.Create(context.Background(), NewNode{Name: "Scout"})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	var nodeT, bareT []time.Duration
	for i := 0; i < b.N; i++ {
		wait := firstFrame(f, n.DMRoomID)
		start := time.Now()
		if _, err := f.svc.PostMessage(ctx, n.DMRoomID, Post{Body: fmt.Sprintf("Hello %d", i)}); err != nil {
			b.Fatal(err)
		}
		wait()
		nodeT = append(nodeT, time.Since(start))
		f.settle()

		start = time.Now()
		first := true
		_, err := f.asst.Turn(ctx, assistant.TurnRequest{Text: fmt.Sprintf("Hello %d", i)}, func(ev assistant.Event) {
			if ev.Type == assistant.EventText && first {
				first = false
				bareT = append(bareT, time.Since(start))
			}
		})
		if err != nil {
			b.Fatal(err)
		}
	}
	np, bp := p50(nodeT), p50(bareT)
	b.ReportMetric(float64(np.Microseconds())/1000, "node-p50-ms")
	b.ReportMetric(float64(bp.Microseconds())/1000, "bare-p50-ms")
	b.ReportMetric(float64((np-bp).Microseconds())/1000, "overhead-p50-ms")
	b.ReportMetric(0, "ns/op")
}

// BenchmarkPlainDMRequest is what a plain DM turn sends the model (budget: < 16 KB), beside a
// bare assistant turn's request in the same run.
func BenchmarkPlainDMRequest(b *testing.B) {
	f := benchFixture(b)
	n, err := f.svc.Create(context.Background(), NewNode{Name: "Scout", TemplateID: "assistant"})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	for i := 0; i < b.N; i++ {
		f.svc.PostMessage(ctx, n.DMRoomID, Post{Body: "What is on my list today?"})
		f.settle()
	}
	reqs := f.model.Requests()
	node := len(reqs[len(reqs)-1].Body)
	persona := len(reqs[len(reqs)-1].System)
	if _, err := f.asst.Turn(ctx, assistant.TurnRequest{Text: "What is on my list today?"}, nil); err != nil {
		b.Fatal(err)
	}
	reqs = f.model.Requests()
	bare := len(reqs[len(reqs)-1].Body)
	b.ReportMetric(float64(node)/1024, "node-request-KB")
	b.ReportMetric(float64(persona), "node-system-chars")
	b.ReportMetric(float64(bare)/1024, "bare-request-KB")
	b.ReportMetric(0, "ns/op")
}

// BenchmarkOpenDM opens a DM (the room and its newest page) among 50 nodes and 10,000 messages
// (budget: < 50 ms), and reports how much the live heap grew for them.
func BenchmarkOpenDM(b *testing.B) {
	f := benchFixture(b)
	ctx := context.Background()
	var before runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	var rooms []string
	for i := 0; i < 50; i++ {
		// Past the 24 a person may make, the rest are written as the store holds them (helpers
		// count the same for opening a room).
		var room string
		err := f.svc.cfg.Writer.Exec(ctx, func(t *ledger.Tx) error {
			id := ledger.NewID("nod_")
			now := t.Now().Format(time.RFC3339Nano)
			if _, err := t.ExecContext(ctx, `INSERT INTO node_agents (id, name, slug, created_at, updated_at) VALUES (?, ?, ?, ?, ?)`,
				id, fmt.Sprintf("Node %d", i), fmt.Sprintf("node-%d", i), now, now); err != nil {
				return err
			}
			var err error
			room, err = f.svc.createRoomTx(t, RoomDM, fmt.Sprintf("Node %d", i), id, "", []string{id})
			return err
		})
		if err != nil {
			b.Fatal(err)
		}
		rooms = append(rooms, room)
	}
	err := f.svc.cfg.Writer.Exec(ctx, func(t *ledger.Tx) error {
		for i := 0; i < 10000; i++ {
			room := rooms[i%len(rooms)]
			author := AuthorPerson
			if i%2 == 1 {
				author = AuthorNode
			}
			if _, err := f.svc.insertMessageTx(t, Message{RoomID: room, Author: author, Kind: KindText,
				Body: fmt.Sprintf("Message %d about the launch plan and what is left to do.", i)}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	var after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&after)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		room := rooms[i%len(rooms)]
		if _, err := f.svc.Room(ctx, room); err != nil {
			b.Fatal(err)
		}
		if _, err := f.svc.Messages(ctx, room, Page{Limit: 50}); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(int64(after.HeapInuse)-int64(before.HeapInuse))/(1<<20), "heap-growth-MB")
}

func p50(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[len(s)/2]
}
