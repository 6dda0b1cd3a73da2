package events

import (
	"errors"
	"testing"
)

func TestBusFansOutInOrder(t *testing.T) {
	b := NewBus()
	a, c := b.Subscribe(10), b.Subscribe(10)
	b.Publish(Event{Seq: 1}, Event{Seq: 2})
	b.Publish(Event{Seq: 3})
	for _, s := range []*Subscription{a, c} {
		for want := int64(1); want <= 3; want++ {
			if got := (<-s.C).Seq; got != want {
				t.Fatalf("got seq %d, want %d", got, want)
			}
		}
	}
}

func TestBusDropsSlowSubscriber(t *testing.T) {
	b := NewBus()
	slow, ok := b.Subscribe(2), b.Subscribe(10)
	for i := int64(1); i <= 5; i++ {
		b.Publish(Event{Seq: i})
	}
	select {
	case <-slow.Done():
	default:
		t.Fatal("slow subscriber still open")
	}
	if !errors.Is(slow.Err(), ErrSlow) || b.Dropped() != 1 {
		t.Errorf("slow: err %v, dropped %d", slow.Err(), b.Dropped())
	}
	if ok.Err() != nil || len(ok.C) != 5 {
		t.Errorf("other subscriber: err %v, %d buffered, want 5", ok.Err(), len(ok.C))
	}
	if b.Subscribers() != 1 {
		t.Errorf("%d subscribers, want 1", b.Subscribers())
	}
}

func TestBusClose(t *testing.T) {
	b := NewBus()
	s := b.Subscribe(1)
	b.Close()
	<-s.Done()
	if !errors.Is(s.Err(), ErrClosed) {
		t.Errorf("err = %v, want ErrClosed", s.Err())
	}
	late := b.Subscribe(1)
	<-late.Done()
	s.Close() // closing twice is harmless
	if allocs := testing.AllocsPerRun(100, func() { b.Publish(Event{Seq: 1}) }); allocs != 0 {
		t.Errorf("Publish to no subscribers allocates %v times", allocs)
	}
}
