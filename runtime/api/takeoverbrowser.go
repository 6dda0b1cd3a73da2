package api

import (
	"bytes"
	"context"
	"sync"
	"time"

	chromium "github.com/ensemblework/ensemble/browser"
	"github.com/ensemblework/ensemble/runtime/node"
	"github.com/ensemblework/ensemble/runtime/takeover"
)

// browserView is what a browser's stream needs of its view (*node.TakeoverView).
type browserView interface {
	Info() node.Takeover
	Screencast(ctx context.Context, o chromium.ScreencastOptions, each func(chromium.Frame)) (stop func(), err error)
	Switched() <-chan struct{}
	Done() <-chan struct{}
}

// browserStream sends a browser view's screencast to the page (spec 002 §8.16.2, §8.17): the
// newest frame whenever fewer than takeoverInFlight are unseen (frames in between are dropped,
// not queued), never one like the last sent, at the size and quality the pace picks from how long
// sends take, and again at the mode's best when the owner takes control or hands back.
type browserStream struct {
	view  browserView
	send  func(plain []byte) error // seals and writes one message
	ping  func() error
	now   func() time.Time
	pace  *takeover.Pace
	stop  func()
	fresh chan struct{} // a frame came

	mu     sync.Mutex // guards the following fields, which the screencast's callback writes
	latest chromium.Frame
	n      uint64 // frames that came
}

func newBrowserStream(view browserView, send func([]byte) error, ping func() error, now func() time.Time) *browserStream {
	return &browserStream{view: view, send: send, ping: ping, now: now, pace: takeover.NewPace(view.Info().Mode), fresh: make(chan struct{}, 1)}
}

func (b *browserStream) each(f chromium.Frame) {
	b.mu.Lock()
	b.latest, b.n = f, b.n+1
	b.mu.Unlock()
	select {
	case b.fresh <- struct{}{}:
	default:
	}
}

// cast (re)starts the screencast at the pace's step.
func (b *browserStream) cast(ctx context.Context) error {
	if b.stop != nil {
		b.stop()
	}
	st := b.pace.Step()
	stop, err := b.view.Screencast(ctx, chromium.ScreencastOptions{MaxWidth: st.MaxWidth, Quality: st.Quality}, b.each)
	b.stop = stop
	return err
}

// run streams until the view or ctx ends; the view's end is told to the page as {t: "end"}.
func (b *browserStream) run(ctx context.Context, seen <-chan int, pingEvery time.Duration) error {
	if err := b.cast(ctx); err != nil {
		return err
	}
	defer func() {
		if b.stop != nil {
			b.stop()
		}
	}()
	var last takeover.JPEGHeader
	var lastJPEG []byte
	var took uint64 // the frames that came, as of the last one taken
	sent, drawn := 0, 0
	var sentAt time.Time
	ping := time.NewTicker(pingEvery)
	defer ping.Stop()
	for {
		switched := b.view.Switched()
		blocked := sent-drawn >= takeoverInFlight && b.now().Sub(sentAt) < takeoverUnseenMax
		b.mu.Lock()
		f, n := b.latest, b.n
		b.mu.Unlock()
		if !blocked && n > took {
			took = n
			h := takeover.JPEGHeader{Width: f.Width, Height: f.Height, URL: chromium.WithoutQuery(f.URL), Title: f.Title, Popup: f.Popup, Mode: b.view.Info().Mode}
			if h != last || !bytes.Equal(f.JPEG, lastJPEG) {
				sent++
				h.Seq = sent
				start := b.now()
				if err := b.send(takeover.EncodeJPEGFrame(h, f.JPEG)); err != nil {
					return err
				}
				h.Seq = 0
				last, lastJPEG, sentAt = h, f.JPEG, b.now()
				if b.pace.Sent(sentAt.Sub(start)) {
					if err := b.cast(ctx); err != nil {
						return err
					}
				}
			}
		}
		var unblock <-chan time.Time
		if blocked {
			unblock = time.After(takeoverUnseenMax - b.now().Sub(sentAt))
		}
		select {
		case <-b.fresh:
		case n := <-seen:
			drawn = max(drawn, min(n, sent))
		case <-unblock:
		case <-switched:
			if b.pace.SetMode(b.view.Info().Mode) {
				if err := b.cast(ctx); err != nil {
					return err
				}
			}
			last, took = takeover.JPEGHeader{}, 0 // the newest frame again, saying the new mode
		case <-ping.C:
			if err := b.ping(); err != nil {
				return err
			}
		case <-b.view.Done():
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}
