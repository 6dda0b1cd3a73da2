package ledger

import (
	"context"
	"errors"
	"sync"
)

// Appender appends events that belong to no record write, such as an agent run's trace, at the
// rate an agent produces them. Each event waits for a commit before it is published, as every
// event does, but the events that arrive while one commit runs share the next: a thousand events a
// second cost a few hundred fsyncs, not a thousand.
type Appender struct {
	w    *Writer
	kick chan struct{}
	done chan struct{}

	mu      sync.Mutex // guards the following fields
	pending []appendItem
	waiters []chan error
	closed  bool
	err     error // the last commit's error, reported by Flush
}

type appendItem struct {
	kind, subject string
	data          any
}

// ErrAppenderClosed is returned by Append and Flush after Close.
var ErrAppenderClosed = errors.New("ledger: appender closed")

// NewAppender starts an appender that commits through w until Close.
func (w *Writer) NewAppender() *Appender {
	a := &Appender{w: w, kick: make(chan struct{}, 1), done: make(chan struct{})}
	go a.loop()
	return a
}

// Append queues an event; it does not wait for the commit. Use Flush to wait.
func (a *Appender) Append(kind, subject string, data any) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.closed {
		return ErrAppenderClosed
	}
	a.pending = append(a.pending, appendItem{kind, subject, data})
	select {
	case a.kick <- struct{}{}:
	default:
	}
	return nil
}

// Flush waits until every event appended before it is committed and published.
func (a *Appender) Flush(ctx context.Context) error {
	ch := make(chan error, 1)
	a.mu.Lock()
	if a.closed {
		a.mu.Unlock()
		return ErrAppenderClosed
	}
	a.waiters = append(a.waiters, ch)
	select {
	case a.kick <- struct{}{}:
	default:
	}
	a.mu.Unlock()
	select {
	case err := <-ch:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Close commits what is queued and stops the appender.
func (a *Appender) Close() error {
	a.mu.Lock()
	if a.closed {
		a.mu.Unlock()
		<-a.done
		return a.err
	}
	a.closed = true
	a.mu.Unlock()
	close(a.kick)
	<-a.done
	return a.err
}

func (a *Appender) loop() {
	defer close(a.done)
	for range a.kick {
		a.commit()
	}
	a.commit()
}

// commit writes everything pending in one transaction, then wakes the Flush callers that were
// waiting before it started.
func (a *Appender) commit() {
	a.mu.Lock()
	items, waiters := a.pending, a.waiters
	a.pending, a.waiters = nil, nil
	a.mu.Unlock()
	var err error
	if len(items) > 0 {
		err = a.w.Exec(context.Background(), func(t *Tx) error {
			for _, it := range items {
				if err := t.Emit(it.kind, it.subject, it.data); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			a.mu.Lock()
			a.err = err
			a.mu.Unlock()
		}
	}
	for _, ch := range waiters {
		ch <- err
	}
}
