// Package livetest is a fake Chromium broker for the tests of live views and takeovers of browser
// tabs: it implements node.Browser with tabs in memory, screencasts of small real JPEGs of one
// colour, and records what it was asked (inputs, screencast options, the clean browser).
package livetest

import (
	"bytes"
	"context"
	"errors"
	"image"
	"image/color"
	"image/jpeg"
	"sync"

	"github.com/ensemblework/ensemble/browser"
)

var errFake = errors.New("livetest: not in this fake")

// Browser is the fake broker. Its zero value has no tabs; Add opens one.
type Browser struct {
	mu      sync.Mutex // guards the following fields
	tabs    map[browser.Work][]browser.TabInfo
	casts   map[int]*cast
	next    int
	colour  color.RGBA
	inputs  []browser.Input
	options []browser.ScreencastOptions
	clean   map[string]bool // open clean browsers, by tab
	cleans  int             // OpenClean calls
	// SignedIn is what CheckSignIn answers; CleanErr what OpenClean does.
	SignedIn bool
	CleanErr error
	// InputCh, when set, hears each input as it is applied.
	InputCh chan browser.Input
}

type cast struct {
	tab  string
	o    browser.ScreencastOptions
	each func(browser.Frame)
}

// Add opens a tab for work.
func (b *Browser) Add(w browser.Work, tab browser.TabInfo) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.tabs == nil {
		b.tabs = map[browser.Work][]browser.TabInfo{}
	}
	tab.Work = w
	b.tabs[w] = append(b.tabs[w], tab)
}

// Remove closes a tab.
func (b *Browser) Remove(w browser.Work, tab string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	var keep []browser.TabInfo
	for _, t := range b.tabs[w] {
		if t.ID != tab {
			keep = append(keep, t)
		}
	}
	b.tabs[w] = keep
}

// Paint changes the page's colour and sends a frame of it to every screencast.
func (b *Browser) Paint(c color.RGBA) {
	b.mu.Lock()
	b.colour = c
	var to []*cast
	for _, c := range b.casts {
		to = append(to, c)
	}
	b.mu.Unlock()
	for _, c := range to {
		c.each(b.frame(c))
	}
}

// Inputs are the inputs applied so far.
func (b *Browser) Inputs() []browser.Input {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]browser.Input(nil), b.inputs...)
}

// Options are the screencasts' options, in the order they were started.
func (b *Browser) Options() []browser.ScreencastOptions {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]browser.ScreencastOptions(nil), b.options...)
}

// Casting counts the screencasts going now.
func (b *Browser) Casting() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.casts)
}

// Clean says whether the clean browser is open at tab, and how often it was opened.
func (b *Browser) Clean(tab string) (open bool, opened int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.clean[tab], b.cleans
}

// frame is the page now, a quarter of the screencast's width, as a real JPEG.
func (b *Browser) frame(c *cast) browser.Frame {
	b.mu.Lock()
	col := b.colour
	var info browser.TabInfo
	for _, ts := range b.tabs {
		for _, t := range ts {
			if t.ID == c.tab {
				info = t
			}
		}
	}
	clean := b.clean[c.tab]
	b.mu.Unlock()
	w := max(c.o.MaxWidth/4, 16)
	h := w * 10 / 16
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := range h {
		for x := range w {
			p := col
			if x > w/4 && x < w/2 && y > h/4 && y < h/2 { // a lighter block, so a picture is not flat
				p = color.RGBA{255 - col.R/2, 255 - col.G/2, 255 - col.B/2, 255}
			}
			img.SetRGBA(x, y, p)
		}
	}
	var out bytes.Buffer
	jpeg.Encode(&out, img, &jpeg.Options{Quality: max(c.o.Quality, 1)})
	title := info.Title
	if clean {
		title = "Clean: " + title
	}
	return browser.Frame{JPEG: out.Bytes(), Width: w, Height: h, URL: info.URL, Title: title, Popup: info.Popup}
}

func (b *Browser) Status(context.Context) browser.Status { return browser.Status{Running: true} }

func (b *Browser) Tabs(w browser.Work) []browser.TabInfo {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]browser.TabInfo(nil), b.tabs[w]...)
}

// Screencast sends the page at once, then on each Paint, until stop or ctx ends.
func (b *Browser) Screencast(ctx context.Context, w browser.Work, tab string, o browser.ScreencastOptions, each func(browser.Frame)) (func(), error) {
	c := &cast{tab: tab, o: o, each: each}
	b.mu.Lock()
	if b.casts == nil {
		b.casts = map[int]*cast{}
	}
	b.next++
	id := b.next
	b.casts[id] = c
	b.options = append(b.options, o)
	b.mu.Unlock()
	each(b.frame(c))
	var once sync.Once
	stop := func() {
		once.Do(func() {
			b.mu.Lock()
			delete(b.casts, id)
			b.mu.Unlock()
		})
	}
	go func() { <-ctx.Done(); stop() }()
	return stop, nil
}

func (b *Browser) Input(ctx context.Context, w browser.Work, tab string, in browser.Input) error {
	b.mu.Lock()
	b.inputs = append(b.inputs, in)
	ch := b.InputCh
	b.mu.Unlock()
	if ch != nil {
		select {
		case ch <- in:
		case <-ctx.Done():
		}
	}
	return nil
}

func (b *Browser) OpenClean(ctx context.Context, w browser.Work, tab string) (bool, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.cleans++
	if b.CleanErr != nil {
		return false, b.CleanErr
	}
	if b.clean == nil {
		b.clean = map[string]bool{}
	}
	b.clean[tab] = true
	return false, nil
}

func (b *Browser) CloseClean(ctx context.Context, w browser.Work, tab string) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	delete(b.clean, tab)
	return nil
}

func (b *Browser) CheckSignIn(ctx context.Context, w browser.Work, tab string) (bool, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.SignedIn, nil
}

func (b *Browser) Open(context.Context, browser.OpenOptions) (browser.Page, error) {
	return browser.Page{}, errFake
}
func (b *Browser) Navigate(context.Context, browser.Work, string, string) (browser.Page, error) {
	return browser.Page{}, errFake
}
func (b *Browser) CloseTab(ctx context.Context, w browser.Work, tab string) error {
	b.Remove(w, tab)
	return nil
}
func (b *Browser) CloseWork(context.Context, browser.Work) error { return nil }
func (b *Browser) Snapshot(context.Context, browser.Work, string, browser.SnapshotOptions) (browser.Snapshot, error) {
	return browser.Snapshot{}, errFake
}
func (b *Browser) Click(context.Context, browser.Work, string, string) (browser.Page, error) {
	return browser.Page{}, errFake
}
func (b *Browser) Type(context.Context, browser.Work, string, string, string, bool) (browser.Page, error) {
	return browser.Page{}, errFake
}
func (b *Browser) Press(context.Context, browser.Work, string, string) (browser.Page, error) {
	return browser.Page{}, errFake
}
func (b *Browser) Wait(context.Context, browser.Work, string, browser.WaitOptions) (browser.Page, error) {
	return browser.Page{}, errFake
}
func (b *Browser) Screenshot(context.Context, browser.Work, string, browser.ShotOptions) (browser.Shot, error) {
	return browser.Shot{}, errFake
}
func (b *Browser) Extract(context.Context, browser.Work, string) (browser.Extraction, error) {
	return browser.Extraction{}, errFake
}
func (b *Browser) Console(browser.Work, string) ([]browser.ConsoleEntry, error) { return nil, errFake }
func (b *Browser) NetworkErrors(browser.Work, string) ([]browser.NetError, error) {
	return nil, errFake
}
func (b *Browser) Upload(context.Context, browser.Work, string, string, []string) (browser.Page, error) {
	return browser.Page{}, errFake
}
func (b *Browser) Download(context.Context, browser.Work, string, string, string) (browser.File, error) {
	return browser.File{}, errFake
}
func (b *Browser) Fetch(context.Context, browser.Work, string, string, string) (browser.File, error) {
	return browser.File{}, errFake
}
func (b *Browser) Hold(context.Context, browser.Work, string, string, browser.SignedInCheck) error {
	return errFake
}
func (b *Browser) Release(context.Context, browser.Work, string, bool) error { return errFake }
