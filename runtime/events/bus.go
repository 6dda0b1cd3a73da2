package events

import (
	"errors"
	"sync"
	"sync/atomic"
)

// ErrSlow closes a subscription whose buffer filled up: the client fell behind. It should reconnect
// and replay from the last seq it saw.
var ErrSlow = errors.New("events: subscriber fell behind; closing the stream so it can resume from its last event")

// ErrClosed ends every subscription when the bus closes.
var ErrClosed = errors.New("events: runtime is stopping")

// Bus fans published events out to subscribers. A slow subscriber never blocks the publisher: when
// its buffer is full it is closed with ErrSlow and counted.
type Bus struct {
	dropped atomic.Int64

	mu     sync.Mutex // guards the following fields
	subs   map[*Subscription]struct{}
	closed bool
}

// NewBus returns an empty bus.
func NewBus() *Bus {
	return &Bus{subs: make(map[*Subscription]struct{})}
}

// Subscription receives events on C until Done is closed; Err then says why.
type Subscription struct {
	C <-chan Event

	c    chan Event
	bus  *Bus
	done chan struct{}
	err  error // set before done is closed
}

// Subscribe returns a subscription buffering up to buffer events.
func (b *Bus) Subscribe(buffer int) *Subscription {
	c := make(chan Event, buffer)
	s := &Subscription{C: c, c: c, bus: b, done: make(chan struct{})}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		s.err = ErrClosed
		close(s.done)
		return s
	}
	b.subs[s] = struct{}{}
	return s
}

// Publish sends evs to every subscriber, in order, without blocking.
func (b *Bus) Publish(evs ...Event) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for s := range b.subs {
		for _, ev := range evs {
			select {
			case s.c <- ev:
			default:
				b.dropped.Add(1)
				b.endLocked(s, ErrSlow)
			}
			if _, ok := b.subs[s]; !ok {
				break
			}
		}
	}
}

// Dropped counts subscribers closed for falling behind.
func (b *Bus) Dropped() int64 { return b.dropped.Load() }

// Subscribers counts the open subscriptions.
func (b *Bus) Subscribers() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.subs)
}

// Close ends every subscription with ErrClosed; later subscriptions end at once.
func (b *Bus) Close() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.closed = true
	for s := range b.subs {
		b.endLocked(s, ErrClosed)
	}
}

func (b *Bus) endLocked(s *Subscription, err error) {
	if _, ok := b.subs[s]; !ok {
		return
	}
	delete(b.subs, s)
	s.err = err
	close(s.done)
}

// Done is closed when the subscription ends.
func (s *Subscription) Done() <-chan struct{} { return s.done }

// Err says why the subscription ended; nil while it is open.
func (s *Subscription) Err() error {
	select {
	case <-s.done:
		return s.err
	default:
		return nil
	}
}

// Close ends the subscription.
func (s *Subscription) Close() {
	s.bus.mu.Lock()
	defer s.bus.mu.Unlock()
	s.bus.endLocked(s, nil)
}
