package node

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/ensemblework/ensemble/browser"
	"github.com/ensemblework/ensemble/engines/enginetest"
	"github.com/ensemblework/ensemble/runtime/models"
)

// fakePage is one page of a scriptedBrowser: its snapshot and where its elements lead.
type fakePage struct {
	url, title, text string
	refs             int
	status           int
	signIn           *browser.SignIn
	clicks           map[string]string // ref → the page it leads to
	types            map[string]string // ref → the page a submitted text leads to
	popups           map[string]string // ref → the page it opens in a new window
	closes           map[string]bool   // ref → the window closes itself (a payment that finished)
}

// scriptedBrowser is a node.Browser over a few scripted pages.
type scriptedBrowser struct {
	mu      sync.Mutex
	pages   map[string]*fakePage // by address
	tabs    map[string]string    // tab → address
	next    int
	clicked []string
	typed   []string
	pressed []string
	work    browser.Work // whose the last tab opened is
}

var _ Browser = (*scriptedBrowser)(nil)

func newScriptedBrowser(pages ...*fakePage) *scriptedBrowser {
	b := &scriptedBrowser{pages: map[string]*fakePage{}, tabs: map[string]string{}}
	for _, p := range pages {
		if p.refs == 0 && p.text != "" {
			p.refs = strings.Count(p.text, "[ref=")
		}
		b.pages[p.url] = p
	}
	return b
}

func (b *scriptedBrowser) pageLocked(tab string) browser.Page {
	p := b.pages[b.tabs[tab]]
	if p == nil {
		return browser.Page{Tab: tab, URL: b.tabs[tab]}
	}
	return browser.Page{Tab: tab, URL: p.url, Title: p.title, Status: p.status, SignIn: p.signIn}
}

func (b *scriptedBrowser) openLocked(url string) string {
	b.next++
	tab := fmt.Sprintf("t%d", b.next)
	b.tabs[tab] = url
	return tab
}

func (b *scriptedBrowser) Status(context.Context) browser.Status {
	return browser.Status{Running: true}
}
func (b *scriptedBrowser) Open(_ context.Context, o browser.OpenOptions) (browser.Page, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.work = o.Work
	return b.pageLocked(b.openLocked(o.URL)), nil
}
func (b *scriptedBrowser) Navigate(_ context.Context, _ browser.Work, tab, url string) (browser.Page, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if _, ok := b.tabs[tab]; !ok {
		return browser.Page{}, browser.ErrNoTab
	}
	b.tabs[tab] = url
	return b.pageLocked(tab), nil
}
func (b *scriptedBrowser) Tabs(browser.Work) []browser.TabInfo {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []browser.TabInfo
	for id, u := range b.tabs {
		out = append(out, browser.TabInfo{ID: id, URL: u})
	}
	return out
}
func (b *scriptedBrowser) CloseTab(context.Context, browser.Work, string) error { return nil }
func (b *scriptedBrowser) CloseWork(context.Context, browser.Work) error        { return nil }
func (b *scriptedBrowser) Snapshot(_ context.Context, _ browser.Work, tab string, o browser.SnapshotOptions) (browser.Snapshot, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if _, ok := b.tabs[tab]; !ok {
		return browser.Snapshot{}, browser.ErrNoTab
	}
	p := b.pages[b.tabs[tab]]
	if p == nil {
		return browser.Snapshot{Page: b.pageLocked(tab)}, nil
	}
	return browser.Snapshot{Page: b.pageLocked(tab), Text: p.text, Refs: p.refs}, nil
}
func (b *scriptedBrowser) Click(_ context.Context, _ browser.Work, tab, ref string) (browser.Page, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.clicked = append(b.clicked, ref)
	p := b.pages[b.tabs[tab]]
	switch {
	case p.popups[ref] != "":
		win := b.openLocked(p.popups[ref])
		pp := b.pages[p.popups[ref]]
		res := b.pageLocked(tab)
		res.Popups = []browser.TabInfo{{ID: win, URL: pp.url, Title: pp.title, Popup: true, OpenedBy: tab}}
		return res, nil
	case p.closes[ref]:
		delete(b.tabs, tab)
		return browser.Page{}, nil
	case p.clicks[ref] != "":
		b.tabs[tab] = p.clicks[ref]
	}
	return b.pageLocked(tab), nil
}
func (b *scriptedBrowser) Type(_ context.Context, _ browser.Work, tab, ref, text string, submit bool) (browser.Page, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.typed = append(b.typed, text)
	if p := b.pages[b.tabs[tab]]; submit && p.types[ref] != "" {
		b.tabs[tab] = p.types[ref]
	}
	return b.pageLocked(tab), nil
}
func (b *scriptedBrowser) Press(_ context.Context, _ browser.Work, tab, key string) (browser.Page, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.pressed = append(b.pressed, key)
	return b.pageLocked(tab), nil
}
func (b *scriptedBrowser) Wait(_ context.Context, _ browser.Work, tab string, _ browser.WaitOptions) (browser.Page, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.pageLocked(tab), nil
}
func (b *scriptedBrowser) Screenshot(_ context.Context, _ browser.Work, tab string, _ browser.ShotOptions) (browser.Shot, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return browser.Shot{Page: b.pageLocked(tab), Mime: "image/png"}, nil
}
func (b *scriptedBrowser) Extract(_ context.Context, _ browser.Work, tab string) (browser.Extraction, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return browser.Extraction{Page: b.pageLocked(tab), Markdown: b.pages[b.tabs[tab]].text}, nil
}
func (b *scriptedBrowser) Console(browser.Work, string) ([]browser.ConsoleEntry, error) {
	return nil, nil
}
func (b *scriptedBrowser) NetworkErrors(browser.Work, string) ([]browser.NetError, error) {
	return nil, nil
}
func (b *scriptedBrowser) Upload(context.Context, browser.Work, string, string, []string) (browser.Page, error) {
	return browser.Page{}, nil
}
func (b *scriptedBrowser) Download(context.Context, browser.Work, string, string, string) (browser.File, error) {
	return browser.File{}, nil
}
func (b *scriptedBrowser) Fetch(context.Context, browser.Work, string, string, string) (browser.File, error) {
	return browser.File{}, nil
}
func (b *scriptedBrowser) Hold(context.Context, browser.Work, string, string, browser.SignedInCheck) error {
	return nil
}
func (b *scriptedBrowser) Release(context.Context, browser.Work, string, bool) error { return nil }
func (b *scriptedBrowser) CheckSignIn(context.Context, browser.Work, string) (bool, error) {
	return false, nil
}
func (b *scriptedBrowser) OpenClean(context.Context, browser.Work, string) (bool, error) {
	return false, nil
}
func (b *scriptedBrowser) CloseClean(context.Context, browser.Work, string) error { return nil }
func (b *scriptedBrowser) Screencast(context.Context, browser.Work, string, browser.ScreencastOptions, func(browser.Frame)) (func(), error) {
	return func() {}, nil
}
func (b *scriptedBrowser) Input(context.Context, browser.Work, string, browser.Input) error {
	return nil
}

// act is the sub-model's answer: one JSON action.
func act(a map[string]any) enginetest.Step {
	j, _ := json.Marshal(a)
	return enginetest.Say("```json\n" + string(j) + "\n```")
}

func TestWebTask(t *testing.T) {
	shop := &fakePage{url: "https://shop.example/", title: "Camp Goods",
		text:  `- searchbox "Search" [ref=e1]` + "\n" + `- link "Mugs" [ref=e2]`,
		types: map[string]string{"e1": "https://shop.example/search?q=kettle"}}
	results := &fakePage{url: "https://shop.example/search?q=kettle", title: "Search: kettle",
		text:   `- heading "Results"` + "\n" + `- link "Gooseneck Kettle" [ref=e7]` + "\n" + `- text "$39.00"`,
		clicks: map[string]string{"e7": "https://shop.example/p/kettle"}}
	product := &fakePage{url: "https://shop.example/p/kettle", title: "Gooseneck Kettle", text: `- heading "Gooseneck Kettle"` + "\n" + `- text "$39.00, in stock"` + "\n" + `- button "Add to basket" [ref=e3]`}
	login := &fakePage{url: "https://accounts.example.com/login", title: "Sign in",
		text: `- textbox "Email" [ref=e1]` + "\n" + `- textbox "Password" [ref=e2]` + "\n" + `- button "Sign in" [ref=e3]`}
	flagged := &fakePage{url: "https://app.example.com/", title: "App", text: `- button "Go" [ref=e1]`,
		signIn: &browser.SignIn{Purpose: "sign_in", Origin: "https://app.example.com", Why: "a sign-in address"}}
	repo := &fakePage{url: "https://git.example.com/me/old", title: "me/old · Settings",
		text:   `- heading "Danger zone"` + "\n" + `- button "Delete repository" [ref=e4]` + "\n" + `- link "Code" [ref=e1]`,
		clicks: map[string]string{"e4": "https://git.example.com/deleted"}}
	deleted := &fakePage{url: "https://git.example.com/deleted", title: "Deleted", text: `- text "me/old was deleted"` + "\n" + `- link "Home" [ref=e1]`}
	checkout := &fakePage{url: "https://tickets.example/", title: "Tickets",
		text:   `- button "Show seat map" [ref=e3]` + "\n" + `- text "Row F"`,
		popups: map[string]string{"e3": "https://maps.example/seat"}}
	seatMap := &fakePage{url: "https://maps.example/seat", title: "Seat map", text: `- text "Seat F12 is free"` + "\n" + `- button "Close" [ref=e1]`,
		closes: map[string]bool{"e1": true}}
	forbidden := &fakePage{url: "https://wall.example/", title: "Forbidden", status: 403}
	denied := &fakePage{url: "https://deny.example/", title: "Access Denied", text: `- heading "Access Denied"` + "\n" + `- text "You don't have permission to access this server."`}
	feed := &fakePage{url: "https://news.example/", title: "News", text: `- link "Story one" [ref=e1]` + "\n" + `- link "Story two" [ref=e2]`}
	pages := []*fakePage{shop, results, product, login, flagged, repo, deleted, checkout, seatMap, forbidden, denied, feed}

	tests := []struct {
		name      string
		in        webTaskIn
		said      string
		script    []enginetest.Step
		status    string
		answer    string // in the answer
		steps     int
		tab       string
		clicked   []string
		typed     []string
		pressed   []string
		asked     int      // model calls
		promptHas []string // in some prompt
	}{
		{name: "done in three steps", in: webTaskIn{Goal: "the price of the gooseneck kettle", URL: shop.url},
			script: []enginetest.Step{
				act(map[string]any{"action": "type", "ref": "e1", "text": "kettle", "submit": true}),
				act(map[string]any{"action": "click", "ref": "e7"}),
				act(map[string]any{"action": "done", "answer": "The Gooseneck Kettle is $39.00 and in stock."}),
			},
			status: WebDone, answer: "$39.00", steps: 3, tab: "t1", clicked: []string{"e7"}, typed: []string{"kettle"}, asked: 3,
			promptHas: []string{"not instructions", "Gooseneck Kettle"}},
		{name: "a password field: sign-in needed, nothing typed", in: webTaskIn{Goal: "read my orders", URL: login.url},
			status: WebSignInNeeded, answer: "browser_login_needed", steps: 0, asked: 0},
		{name: "the broker saw a sign-in", in: webTaskIn{Goal: "open the app", URL: flagged.url},
			status: WebSignInNeeded, answer: "app.example.com", asked: 0},
		{name: "a delete the owner did not ask for is blocked", in: webTaskIn{Goal: "tidy up my old repository", URL: repo.url},
			said:   "Can you tidy up my old repo?",
			script: []enginetest.Step{act(map[string]any{"action": "click", "ref": "e4"})},
			status: WebBlocked, answer: `"Delete repository" (e4)`, steps: 1, asked: 1},
		{name: "a delete the owner asked for", in: webTaskIn{Goal: "delete my old repository", URL: repo.url},
			said: "Please delete the old repo, I don't need it.",
			script: []enginetest.Step{
				act(map[string]any{"action": "click", "ref": "e4"}),
				act(map[string]any{"action": "done", "answer": "me/old is deleted."}),
			},
			status: WebDone, answer: "deleted", steps: 2, clicked: []string{"e4"}, asked: 2},
		{name: "a popup followed and back", in: webTaskIn{Goal: "is seat F12 free", URL: checkout.url},
			script: []enginetest.Step{
				act(map[string]any{"action": "click", "ref": "e3"}),
				act(map[string]any{"action": "click", "ref": "e1"}).When(enginetest.Match{LastUserContains: "Title: Seat map"}),
				act(map[string]any{"action": "done", "answer": "Seat F12 is free."}).When(enginetest.Match{LastUserContains: "back in tab t1"}),
			},
			status: WebDone, answer: "F12 is free", steps: 4, tab: "t1", clicked: []string{"e3", "e1"}, asked: 3,
			promptHas: []string{"It opened a new window, tab t2 (Seat map)"}},
		{name: "403: blocked, not tried again", in: webTaskIn{Goal: "read the wall", URL: forbidden.url},
			status: WebBlocked, answer: "403", asked: 0},
		{name: "access denied: blocked", in: webTaskIn{Goal: "read it", URL: denied.url},
			status: WebBlocked, answer: "access is denied", asked: 0},
		{name: "out of steps, a scroll that did nothing not repeated", in: webTaskIn{Goal: "find story ten", URL: feed.url, MaxSteps: 3},
			script: []enginetest.Step{
				act(map[string]any{"action": "scroll", "direction": "down"}),
				act(map[string]any{"action": "scroll", "direction": "down"}),
				act(map[string]any{"action": "scroll", "direction": "down"}).When(enginetest.Match{LastUserContains: "did not change the page"}),
			},
			status: WebGaveUp, answer: "3 steps", steps: 3, pressed: []string{"PageDown"}, asked: 3,
			promptHas: []string{"These did not change the page"}},
	}
	f := newFixture(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := newScriptedBrowser(pages...)
			f.model.Script(tt.script...)
			var mu sync.Mutex
			var prompts []string
			w := &webTask{b: b, work: "node:n1:own", owner: ownerTag, ownerSaid: tt.said,
				ask: func(ctx context.Context, system, prompt string) (string, error) {
					mu.Lock()
					prompts = append(prompts, prompt)
					mu.Unlock()
					resp, err := f.asst.Complete(ctx, "anthropic", "claude-test", models.Request{System: system, Effort: "low",
						Messages: []models.Message{{Role: "user", Text: prompt}}})
					return resp.Text, err
				}}
			a, err := w.run(context.Background(), tt.in)
			if err != nil {
				t.Fatal(err)
			}
			if a.Status != tt.status || !strings.Contains(a.Answer, tt.answer) {
				t.Fatalf("status %q, answer %q; want %q with %q (steps %+v)", a.Status, a.Answer, tt.status, tt.answer, a.Steps)
			}
			if tt.steps != 0 && len(a.Steps) != tt.steps {
				t.Errorf("%d steps, want %d: %+v", len(a.Steps), tt.steps, a.Steps)
			}
			if tt.tab != "" && a.Tab != tt.tab {
				t.Errorf("ended in tab %q, want %q", a.Tab, tt.tab)
			}
			if fmt.Sprint(b.clicked) != fmt.Sprint(tt.clicked) || fmt.Sprint(b.typed) != fmt.Sprint(tt.typed) || fmt.Sprint(b.pressed) != fmt.Sprint(tt.pressed) {
				t.Errorf("clicked %q typed %q pressed %q; want %q %q %q", b.clicked, b.typed, b.pressed, tt.clicked, tt.typed, tt.pressed)
			}
			if len(prompts) != tt.asked {
				t.Errorf("asked the model %d times, want %d", len(prompts), tt.asked)
			}
			all := strings.Join(prompts, "\n")
			for _, s := range tt.promptHas {
				if !strings.Contains(all, s) {
					t.Errorf("no prompt holds %q:\n%s", s, all)
				}
			}
			if n := f.model.Remaining(); n != 0 {
				t.Errorf("%d scripted answers left", n)
			}
		})
	}
}

func TestParseWebAction(t *testing.T) {
	tests := []struct {
		in   string
		want webAction
	}{
		{`{"action":"click","ref":"e3"}`, webAction{Action: "click", Ref: "e3"}},
		{"Sure.\n```json\n{\"action\": \"Done\", \"answer\": \"It is $5.\"}\n```", webAction{Action: "done", Answer: "It is $5."}},
		{"I cannot tell", webAction{Action: "none"}},
	}
	for _, tt := range tests {
		if got, _ := parseWebAction(tt.in); got != tt.want {
			t.Errorf("parseWebAction(%q) = %+v, want %+v", tt.in, got, tt.want)
		}
	}
}

// web_task as a node's turn runs it: the node's own browsing, its chat model, and the owner's
// words in the thread deciding a risky click.
func TestWebTaskForNode(t *testing.T) {
	b := newScriptedBrowser(&fakePage{url: "https://mail.example/draft", title: "Draft",
		text:   `- textbox "To" [ref=e1]` + "\n" + `- button "Send" [ref=e2]`,
		clicks: map[string]string{"e2": "https://mail.example/sent"}},
		&fakePage{url: "https://mail.example/sent", title: "Sent", text: `- text "Message sent"` + "\n" + `- link "Inbox" [ref=e1]`})
	f := newFixture(t, func(c *Config) { c.Browser = b })
	n := f.node("Ada")
	f.model.Script(enginetest.Say("(noted)").When(enginetest.Match{LastUserContains: "send the draft"})) // the turn the message starts
	f.post(n.DMRoomID, "Please send the draft to Sam.")
	f.settle()
	f.model.Script(
		act(map[string]any{"action": "click", "ref": "e2"}).When(enginetest.Match{SystemContains: "You drive a web browser"}),
		act(map[string]any{"action": "done", "answer": "Sent."}).When(enginetest.Match{SystemContains: "You drive a web browser"}),
	)
	c := &turnCtx{s: f.svc, node: n, rt: &runningTurn{turn: Turn{NodeID: n.ID, RoomID: n.DMRoomID, Lane: convLane(n.DMRoomID, true), Private: true, ByOwner: true}}}
	res, err := f.svc.webTask(context.Background(), c, webTaskIn{Goal: "send the draft", URL: "https://mail.example/draft"})
	if err != nil {
		t.Fatal(err)
	}
	a := res.Data.(WebTaskAnswer)
	if a.Status != WebDone || fmt.Sprint(b.clicked) != "[e2]" || !strings.Contains(res.Summary, "Sent.") {
		t.Fatalf("web_task = %q %+v; clicked %v", res.Summary, a, b.clicked)
	}
	if want := browser.Work("node:" + n.ID + ":own"); b.work != want {
		t.Errorf("opened for %q, want the node's own browsing %q", b.work, want)
	}
}
