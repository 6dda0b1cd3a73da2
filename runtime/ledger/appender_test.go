package ledger

import (
	"context"
	"fmt"
	"sync"
	"testing"
)

func TestAppenderCommitsInOrderAndGroups(t *testing.T) {
	w, bus, st := newWriter(t)
	sub := bus.Subscribe(10_000)
	a := w.NewAppender()
	const n = 2000
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range n / 4 {
				if err := a.Append("run.step", fmt.Sprintf("job%d", g), map[string]int{"i": i}); err != nil {
					t.Error(err)
				}
			}
		}()
	}
	wg.Wait()
	if err := a.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := count(t, st, "events"); got != n {
		t.Fatalf("%d events committed, want %d", got, n)
	}
	if len(sub.C) != n {
		t.Fatalf("%d events published, want %d", len(sub.C), n)
	}
	last := int64(0)
	perJob := map[string]int{}
	for range n {
		ev := <-sub.C
		if ev.Seq <= last {
			t.Fatalf("published out of order: %d after %d", ev.Seq, last)
		}
		last = ev.Seq
		var d struct{ I int }
		fmt.Sscanf(string(ev.Data), `{"i":%d}`, &d.I)
		if d.I != perJob[ev.Subject] {
			t.Fatalf("%s: event %d arrived where %d was due", ev.Subject, d.I, perJob[ev.Subject])
		}
		perJob[ev.Subject]++
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	if err := a.Append("x", "", nil); err != ErrAppenderClosed {
		t.Errorf("Append after Close: %v", err)
	}
}

func BenchmarkAppender(b *testing.B) {
	w, _, _ := newWriter(b)
	a := w.NewAppender()
	defer a.Close()
	b.ResetTimer()
	for i := range b.N {
		a.Append("run.step", "job", map[string]int{"i": i})
	}
	a.Flush(context.Background())
}
