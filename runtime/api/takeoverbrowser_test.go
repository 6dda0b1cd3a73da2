package api

import (
	"context"
	"sync"
	"testing"
	"time"

	chromium "github.com/ensemblework/ensemble/browser"
	"github.com/ensemblework/ensemble/runtime/node"
	"github.com/ensemblework/ensemble/runtime/takeover"
)

// fakeView is a browser view whose screencast the test drives frame by frame.
type fakeView struct {
	mu       sync.Mutex
	mode     string
	each     func(chromium.Frame)
	options  []chromium.ScreencastOptions
	switched chan struct{}
	done     chan struct{}
}

func (v *fakeView) Info() node.Takeover {
	v.mu.Lock()
	defer v.mu.Unlock()
	return node.Takeover{ID: "tk_test", Kind: "browser", Mode: v.mode}
}

func (v *fakeView) Screencast(ctx context.Context, o chromium.ScreencastOptions, each func(chromium.Frame)) (func(), error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.each, v.options = each, append(v.options, o)
	return func() {}, nil
}

func (v *fakeView) Switched() <-chan struct{} {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.switched
}

func (v *fakeView) Done() <-chan struct{} { return v.done }

func (v *fakeView) emit(b byte) {
	v.mu.Lock()
	each := v.each
	v.mu.Unlock()
	each(chromium.Frame{JPEG: []byte{0xff, 0xd8, b}, Width: 4, Height: 2, URL: "https://example.com/a?code=123#x", Title: "A"})
}

func (v *fakeView) last() chromium.ScreencastOptions {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.options[len(v.options)-1]
}

// TestBrowserStreamPace: slow sends step the screencast down, quick ones back up; a frame like
// the last is not sent; taking control asks for the better picture and sends the page again. The
// clock is the test's: each send takes what the test says, with no sleeping.
func TestBrowserStreamPace(t *testing.T) {
	v := &fakeView{mode: "watch", switched: make(chan struct{}), done: make(chan struct{})}
	var clock time.Time
	var mu sync.Mutex
	took := 400 * time.Millisecond
	seen := make(chan int, 64)
	sent := make(chan takeover.JPEGHeader, 64)
	send := func(plain []byte) error {
		h, _, err := takeover.DecodeJPEGFrame(plain)
		if err != nil {
			t.Error(err)
		}
		mu.Lock()
		clock = clock.Add(took)
		mu.Unlock()
		seen <- h.Seq // drawn at once
		sent <- h
		return nil
	}
	now := func() time.Time { mu.Lock(); defer mu.Unlock(); return clock }
	setTook := func(d time.Duration) { mu.Lock(); took = d; mu.Unlock() }
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ran := make(chan error, 1)
	s := newBrowserStream(v, send, func() error { return nil }, now)
	go func() { ran <- s.run(ctx, seen, time.Hour) }()
	next := func() takeover.JPEGHeader {
		t.Helper()
		select {
		case h := <-sent:
			return h
		case <-ctx.Done():
			t.Fatal("no frame sent")
			return takeover.JPEGHeader{}
		}
	}
	for v.Info().Mode == "" || func() bool { v.mu.Lock(); defer v.mu.Unlock(); return v.each == nil }() {
		select { // the stream starts its screencast first
		case <-ctx.Done():
			t.Fatal("no screencast")
		default:
		}
	}
	if o := v.last(); o != (chromium.ScreencastOptions{MaxWidth: 1024, Quality: 45}) {
		t.Fatalf("watching starts at %+v", o)
	}

	v.emit(1)
	if h := next(); h.Seq != 1 || h.URL != "https://example.com/a" || h.Mode != "watch" {
		t.Fatalf("first frame %+v", h)
	}
	// That send was slow: the screencast now goes at the next step down; and again.
	v.emit(2)
	next()
	if o := v.last(); o != (chromium.ScreencastOptions{MaxWidth: 640, Quality: 35}) {
		t.Fatalf("after two slow sends: %+v", o)
	}
	// A frame like the last is not sent: the next one sent is the new picture, numbered on.
	v.emit(2)
	setTook(10 * time.Millisecond)
	v.emit(3)
	if h := next(); h.Seq != 3 {
		t.Fatalf("after a repeated picture: frame %d, want 3", h.Seq)
	}
	for i := range takeover.QuickRun {
		v.emit(byte(10 + i))
		next()
	}
	if o := v.last(); o != (chromium.ScreencastOptions{MaxWidth: 800, Quality: 40}) {
		t.Fatalf("after quick sends: %+v", o)
	}

	// Taking control: the best step at once, and the page again in control.
	v.mu.Lock()
	v.mode = "control"
	close(v.switched)
	v.switched = make(chan struct{})
	v.mu.Unlock()
	if h := next(); h.Mode != "control" {
		t.Fatalf("after control: %+v", h)
	}
	if o := v.last(); o != (chromium.ScreencastOptions{MaxWidth: 1280, Quality: 55}) {
		t.Fatalf("in control: %+v", o)
	}
	close(v.done)
	if err := <-ran; err != nil {
		t.Fatal(err)
	}
}
