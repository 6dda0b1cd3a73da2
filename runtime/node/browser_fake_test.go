package node

import (
	"bytes"
	"context"
	"image"
	"image/color"
	"image/png"
	"strings"
	"sync"

	"github.com/ensemblework/ensemble/browser"
)

// fakeBrowser is node.Browser in memory: tabs by work, a sign-in on any page whose address has
// "login" in it, screenshots whose text the test sets, and a record of what was asked.
type fakeBrowser struct {
	mu       sync.Mutex
	next     int
	tabs     map[string]browser.TabInfo
	opens    []browser.OpenOptions
	held     map[string]string // tab → purpose
	released map[string]bool   // tab → cleared
	typed    []string
	clicked  []string
	signedIn bool   // what CheckSignIn answers
	shotText string // what a screenshot's page showed
	blank    bool   // screenshots come back one colour
	display  bool
}

var _ Browser = (*fakeBrowser)(nil)

func newFakeBrowser() *fakeBrowser {
	return &fakeBrowser{tabs: map[string]browser.TabInfo{}, held: map[string]string{}, released: map[string]bool{}}
}

func (b *fakeBrowser) page(tab, url string) browser.Page {
	p := browser.Page{Tab: tab, URL: url, Title: "A page", Status: 200}
	if strings.Contains(url, "login") {
		p.SignIn = &browser.SignIn{Purpose: "sign_in", Origin: pageOrigin(url), Why: "a password field"}
	}
	return p
}

func (b *fakeBrowser) Status(context.Context) browser.Status {
	return browser.Status{Running: true, Display: b.display, Chromium: "/usr/bin/chromium"}
}

func (b *fakeBrowser) Open(_ context.Context, o browser.OpenOptions) (browser.Page, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.opens = append(b.opens, o)
	id := o.Tab
	if id == "" {
		b.next++
		id = "t" + string(rune('0'+b.next))
	}
	b.tabs[id] = browser.TabInfo{ID: id, Work: o.Work, URL: o.URL, Private: o.Private}
	return b.page(id, o.URL), nil
}

func (b *fakeBrowser) tab(w browser.Work, tab string) (browser.TabInfo, error) {
	t, ok := b.tabs[tab]
	switch {
	case !ok:
		return t, browser.ErrNoTab
	case t.Work != w:
		return t, browser.ErrNotYours
	case b.held[tab] != "":
		return t, browser.ErrSensitive
	}
	return t, nil
}

func (b *fakeBrowser) Navigate(_ context.Context, w browser.Work, tab, url string) (browser.Page, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	t, err := b.tab(w, tab)
	if err != nil {
		return browser.Page{}, err
	}
	t.URL = url
	b.tabs[tab] = t
	return b.page(tab, url), nil
}

func (b *fakeBrowser) Tabs(w browser.Work) []browser.TabInfo {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []browser.TabInfo
	for _, t := range b.tabs {
		if t.Work == w {
			out = append(out, t)
		}
	}
	return out
}

func (b *fakeBrowser) CloseTab(_ context.Context, w browser.Work, tab string) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if _, err := b.tab(w, tab); err != nil {
		return err
	}
	delete(b.tabs, tab)
	return nil
}

func (b *fakeBrowser) CloseWork(_ context.Context, w browser.Work) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	for id, t := range b.tabs {
		if t.Work == w {
			delete(b.tabs, id)
		}
	}
	return nil
}

func (b *fakeBrowser) Snapshot(_ context.Context, w browser.Work, tab string, _ browser.SnapshotOptions) (browser.Snapshot, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	t, err := b.tab(w, tab)
	if err != nil {
		return browser.Snapshot{}, err
	}
	return browser.Snapshot{Page: b.page(tab, t.URL), Text: b.shotText, Refs: 1}, nil
}

func (b *fakeBrowser) act(w browser.Work, tab string) (browser.Page, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	t, err := b.tab(w, tab)
	if err != nil {
		return browser.Page{}, err
	}
	return b.page(tab, t.URL), nil
}

func (b *fakeBrowser) Click(_ context.Context, w browser.Work, tab, ref string) (browser.Page, error) {
	b.mu.Lock()
	b.clicked = append(b.clicked, ref)
	b.mu.Unlock()
	return b.act(w, tab)
}

func (b *fakeBrowser) clicks() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return strings.Join(b.clicked, ",")
}

func (b *fakeBrowser) Type(_ context.Context, w browser.Work, tab, _, text string, _ bool) (browser.Page, error) {
	b.mu.Lock()
	b.typed = append(b.typed, text)
	b.mu.Unlock()
	return b.act(w, tab)
}

func (b *fakeBrowser) Press(_ context.Context, w browser.Work, tab, _ string) (browser.Page, error) {
	return b.act(w, tab)
}

func (b *fakeBrowser) Wait(_ context.Context, w browser.Work, tab string, _ browser.WaitOptions) (browser.Page, error) {
	return b.act(w, tab)
}

func (b *fakeBrowser) Screenshot(_ context.Context, w browser.Work, tab string, o browser.ShotOptions) (browser.Shot, error) {
	p, err := b.act(w, tab)
	if err != nil {
		return browser.Shot{}, err
	}
	img := image.NewRGBA(image.Rect(0, 0, 64, 40))
	for y := 0; y < 40; y++ {
		for x := 0; x < 64; x++ {
			c := color.RGBA{255, 255, 255, 255}
			if !b.blank && (x/8+y/8)%2 == 0 {
				c = color.RGBA{20, 40, 200, 255}
			}
			img.Set(x, y, c)
		}
	}
	var buf bytes.Buffer
	png.Encode(&buf, img)
	return browser.Shot{Page: p, Image: buf.Bytes(), Mime: "image/png", Width: 64, Height: 40, Text: b.shotText}, nil
}

func (b *fakeBrowser) Extract(_ context.Context, w browser.Work, tab string) (browser.Extraction, error) {
	p, err := b.act(w, tab)
	return browser.Extraction{Page: p, Markdown: b.shotText}, err
}

func (b *fakeBrowser) Console(browser.Work, string) ([]browser.ConsoleEntry, error) { return nil, nil }
func (b *fakeBrowser) NetworkErrors(browser.Work, string) ([]browser.NetError, error) {
	return nil, nil
}

func (b *fakeBrowser) Upload(_ context.Context, w browser.Work, tab, _ string, _ []string) (browser.Page, error) {
	return b.act(w, tab)
}

func (b *fakeBrowser) Download(context.Context, browser.Work, string, string, string) (browser.File, error) {
	return browser.File{}, browser.ErrNoTab
}

func (b *fakeBrowser) Fetch(context.Context, browser.Work, string, string, string) (browser.File, error) {
	return browser.File{}, browser.ErrNoTab
}

func (b *fakeBrowser) Hold(_ context.Context, w browser.Work, tab, purpose string, _ browser.SignedInCheck) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if _, ok := b.tabs[tab]; !ok {
		return browser.ErrNoTab
	}
	b.held[tab] = purpose
	return nil
}

func (b *fakeBrowser) Release(_ context.Context, w browser.Work, tab string, clear bool) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	delete(b.held, tab)
	b.released[tab] = clear
	return nil
}

func (b *fakeBrowser) CheckSignIn(context.Context, browser.Work, string) (bool, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.signedIn, nil
}

func (b *fakeBrowser) OpenClean(context.Context, browser.Work, string) (bool, error) {
	return b.display, nil
}
func (b *fakeBrowser) CloseClean(context.Context, browser.Work, string) error { return nil }
func (b *fakeBrowser) Screencast(context.Context, browser.Work, string, browser.ScreencastOptions, func(browser.Frame)) (func(), error) {
	return func() {}, nil
}
func (b *fakeBrowser) Input(context.Context, browser.Work, string, browser.Input) error { return nil }

func (b *fakeBrowser) isHeld(tab string) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.held[tab] != ""
}
