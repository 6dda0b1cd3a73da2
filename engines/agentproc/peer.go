package agentproc

import (
	"context"
	"errors"
	"strconv"
	"sync"
)

// ErrClosed is returned for a request made, or still waiting, once the peer's output has ended.
var ErrClosed = errors.New("the agent's connection is closed")

// Peer is the bookkeeping of a line protocol in which both sides send requests, as Claude Code's
// control protocol, Codex's app-server and ACP do: the requests this side waits on, by id, and the
// peer's requests being answered, each on a goroutine of its own with a ctx that ends when the
// peer withdraws it or the connection closes. R is what answers one of this side's requests.
//
// The drivers frame and route the lines; Peer holds what every one of them did the same way.
type Peer[R any] struct {
	mu       sync.Mutex // guards the following fields
	pending  map[string]chan R
	inflight map[string]context.CancelFunc
	seq      int64
	closed   bool

	wg   sync.WaitGroup
	done chan struct{}
}

// NewPeer returns a Peer with nothing pending.
func NewPeer[R any]() *Peer[R] {
	return &Peer[R]{pending: map[string]chan R{}, inflight: map[string]context.CancelFunc{}, done: make(chan struct{})}
}

// Open numbers a new request of this side: its number, its key (prefix and the number, which the
// answer must name), and the channel its answer arrives on. It fails with [ErrClosed] once the
// connection has closed.
func (p *Peer[R]) Open(prefix string) (n int64, key string, answer <-chan R, err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return 0, "", nil, ErrClosed
	}
	p.seq++
	key = prefix + strconv.FormatInt(p.seq, 10)
	ch := make(chan R, 1)
	p.pending[key] = ch
	return p.seq, key, ch, nil
}

// Drop forgets a request nobody waits for any more (it could not be sent, or its ctx ended).
func (p *Peer[R]) Drop(key string) {
	p.mu.Lock()
	delete(p.pending, key)
	p.mu.Unlock()
}

// Await waits for the answer to the request key, or ctx; a closed connection gives [ErrClosed].
func (p *Peer[R]) Await(ctx context.Context, key string, answer <-chan R) (R, error) {
	select {
	case r, ok := <-answer:
		if !ok {
			var zero R
			return zero, ErrClosed
		}
		return r, nil
	case <-ctx.Done():
		p.Drop(key)
		var zero R
		return zero, context.Cause(ctx)
	}
}

// Resolve delivers the peer's answer to the request key; false when no request waits under it
// (one this side never sent, or already answered).
func (p *Peer[R]) Resolve(key string, r R) bool {
	p.mu.Lock()
	ch, ok := p.pending[key]
	delete(p.pending, key)
	p.mu.Unlock()
	if ok {
		ch <- r
	}
	return ok
}

// Handle runs answer for the peer's request key on a goroutine of its own, with a ctx from ctx
// that [Peer.Withdraw] or [Peer.Close] ends; false, running nothing, when a request under the same
// key is still being answered.
func (p *Peer[R]) Handle(ctx context.Context, key string, answer func(ctx context.Context)) bool {
	rctx, cancel := context.WithCancel(ctx)
	p.mu.Lock()
	if _, dup := p.inflight[key]; dup || p.closed {
		p.mu.Unlock()
		cancel()
		return !dup
	}
	p.inflight[key] = cancel
	p.wg.Add(1)
	p.mu.Unlock()
	go func() {
		defer p.wg.Done()
		defer func() {
			p.mu.Lock()
			delete(p.inflight, key)
			p.mu.Unlock()
			cancel()
		}()
		answer(rctx)
	}()
	return true
}

// Withdraw ends the answering of the peer's request key: the peer no longer waits for it.
func (p *Peer[R]) Withdraw(key string) {
	p.mu.Lock()
	stop := p.inflight[key]
	p.mu.Unlock()
	if stop != nil {
		stop()
	}
}

// Close is the end of the connection: every request of this side still waiting gets
// [ErrClosed], every request of the peer's still being answered is withdrawn and waited for, and
// [Peer.Done] closes. Call it once, when the peer's output has ended.
func (p *Peer[R]) Close() {
	p.mu.Lock()
	p.closed = true
	for key, ch := range p.pending {
		close(ch)
		delete(p.pending, key)
	}
	for _, stop := range p.inflight {
		stop()
	}
	p.mu.Unlock()
	p.wg.Wait()
	close(p.done)
}

// Done is closed once [Peer.Close] has returned.
func (p *Peer[R]) Done() <-chan struct{} { return p.done }
