package jobs

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/ensemblework/ensemble/browser"
	"github.com/ensemblework/ensemble/runtime/judge"
)

// runBrowser is a Browser in memory that records what the run asked.
type runBrowser struct {
	Browser // the methods a test does not reach panic
	mu      sync.Mutex
	opens   []browser.OpenOptions
	typed   []string
	closed  []browser.Work
}

func (b *runBrowser) Status(context.Context) browser.Status { return browser.Status{Running: true} }
func (b *runBrowser) Open(_ context.Context, o browser.OpenOptions) (browser.Page, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.opens = append(b.opens, o)
	return browser.Page{Tab: "t1", URL: o.URL, Title: "Shop"}, nil
}
func (b *runBrowser) Type(_ context.Context, _ browser.Work, tab, _, text string, _ bool) (browser.Page, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.typed = append(b.typed, text)
	return browser.Page{Tab: tab}, nil
}
func (b *runBrowser) CloseWork(_ context.Context, w browser.Work) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.closed = append(b.closed, w)
	return nil
}

// A run's MCP server has the browser and capture tools: a tab of the run's own work, Ensemble
// itself refused with the sentence, a saved secret never typed.
func TestRunBrowserTools(t *testing.T) {
	b := &runBrowser{}
	_, j, sess := runClient(t, nil, func(o *Options) {
		o.Browser = b
		o.Hide = func(s string) string { return strings.ReplaceAll(s, "hunter2-kept", "[hidden]") }
		o.RefuseURL = func(u string) string {
			if strings.Contains(u, "127.0.0.1:7777") {
				return "127.0.0.1:7777 is Ensemble itself, not a website to open or sign in to. Use your Ensemble tools: the board."
			}
			return ""
		}
	})
	list, err := sess.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range list.Tools {
		names = append(names, tl.Name)
	}
	for _, want := range []string{"browser_open", "browser_snapshot", "browser_screenshot", "capture_screenshot", "capture_status"} {
		if !slices.Contains(names, want) {
			t.Fatalf("the run's server lists %v, without %s", names, want)
		}
	}
	if text, isErr := callText(t, sess, "browser_open", map[string]any{"url": "https://shop.example.com/"}); isErr || !strings.Contains(text, "Tab t1") {
		t.Fatalf("browser_open: %q %v", text, isErr)
	}
	if o := b.opens[0]; o.Work != browser.Work("run:"+j.ID) || o.Network != browser.Anywhere {
		t.Fatalf("opened %+v", o)
	}
	if text, isErr := callText(t, sess, "browser_open", map[string]any{"url": "http://127.0.0.1:7777/"}); !isErr || !strings.Contains(text, "is Ensemble itself") {
		t.Fatalf("Ensemble's own page: %q %v", text, isErr)
	}
	if text, isErr := callText(t, sess, "browser_type", map[string]any{"tab": "t1", "ref": "e1", "text": "hunter2-kept"}); !isErr || len(b.typed) != 0 {
		t.Fatalf("a saved secret was typed: %q %v %q", text, isErr, b.typed)
	}
}

// A run with the internet off opens only this computer's own addresses, with LocalOnly.
func TestRunBrowserInternetOff(t *testing.T) {
	r := &run{s: &Service{opts: Options{}}, job: Job{ID: "job_1", Settings: Settings{Internet: false}}}
	if r.network() != browser.LocalOnly {
		t.Fatal("internet off is not LocalOnly")
	}
	if err := r.mayOpen("https://example.com/"); err == nil || !strings.Contains(err.Error(), "internet off") {
		t.Fatalf("a public page with the internet off: %v", err)
	}
	if err := r.mayOpen("http://localhost:5173/"); err != nil {
		t.Fatalf("this computer's own app: %v", err)
	}
	r.job.Settings.Internet = true
	if r.network() != browser.Anywhere {
		t.Fatal("internet on is not Anywhere")
	}
}

// In Ask mode a browser tool asks; Allow for this run on one covers the run's other browser
// tools (the judge's group "browser", which keep adds), and not the capture tools.
func TestRunBrowserToolsFollowTheMode(t *testing.T) {
	call := func(name string) judge.Call {
		return judge.Call{Tool: judge.ToolMCP, Server: judge.OwnServer, Name: name}
	}
	ask := judge.Settings{Mode: judge.ModeAsk, Folder: "/work/x"}
	if v := judge.Decide(call("browser_open"), ask); v.Decision != judge.Ask {
		t.Fatalf("Ask mode: %v", v.Decision)
	}
	if v := judge.Decide(call("browser_open"), judge.Settings{Mode: judge.ModeReview, Folder: "/work/x"}); v.Decision != judge.Allow {
		t.Fatalf("Review only: %v", v.Decision)
	}
	r := &run{rec: &recorder{closed: true, hide: func(s string) string { return s }}}
	r.keep(call("browser_open"), judge.Verdict{Decision: judge.Ask})
	ask.Kept = r.kept
	if v := judge.Decide(call("browser_snapshot"), ask); v.Decision != judge.Allow {
		t.Fatalf("after Allow for this run on browser_open, browser_snapshot: %v (kept %v)", v.Decision, r.kept.Tools)
	}
	if v := judge.Decide(call("capture_screenshot"), ask); v.Decision != judge.Ask {
		t.Fatalf("capture_screenshot after a browser answer: %v", v.Decision)
	}
}

// clickBrowser is a runBrowser with a page to click on.
type clickBrowser struct {
	runBrowser
	clicked []string
}

func (b *clickBrowser) Snapshot(_ context.Context, _ browser.Work, tab string, _ browser.SnapshotOptions) (browser.Snapshot, error) {
	return browser.Snapshot{Page: browser.Page{Tab: tab, URL: "https://shop.example.com/cart"}, Text: "- link \"Details\" [ref=e1]\n- button \"Place order\" [ref=e2]", Refs: 2}, nil
}
func (b *clickBrowser) Tabs(browser.Work) []browser.TabInfo {
	return []browser.TabInfo{{ID: "t1", URL: "https://shop.example.com/cart"}}
}
func (b *clickBrowser) Click(_ context.Context, _ browser.Work, tab, ref string) (browser.Page, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.clicked = append(b.clicked, ref)
	return browser.Page{Tab: tab, URL: "https://shop.example.com/cart"}, nil
}

// A run's click that would order for the person, which its brief did not ask for, is asked on
// Needs me first; a plain click is not; Deny refuses it.
func TestRunConsequentialClick(t *testing.T) {
	b := &clickBrowser{}
	e, _, sess := runClient(t, nil, func(o *Options) { o.Browser = b })
	if _, isErr := callText(t, sess, "browser_snapshot", map[string]any{"tab": "t1"}); isErr {
		t.Fatal("snapshot failed")
	}
	if text, isErr := callText(t, sess, "browser_click", map[string]any{"tab": "t1", "ref": "e1"}); isErr || len(e.asker.asked) != 0 {
		t.Fatalf("a plain click: %q %v, asked %d", text, isErr, len(e.asker.asked))
	}
	if text, isErr := callText(t, sess, "browser_click", map[string]any{"tab": "t1", "ref": "e2"}); isErr || len(e.asker.asked) != 1 {
		t.Fatalf("an order allowed once: %q %v, asked %d", text, isErr, len(e.asker.asked))
	}
	if q := e.asker.asked[0]; q.Kind != Approval || !strings.Contains(q.Text, `"Place order" on shop.example.com would order`) || q.Recommended != Deny {
		t.Fatalf("the question: %+v", q)
	}
	e.asker.mu.Lock()
	e.asker.reply = Reply{Option: Deny, Text: ApprovalOptions[Deny]}
	e.asker.mu.Unlock()
	if text, isErr := callText(t, sess, "browser_click", map[string]any{"tab": "t1", "ref": "e2"}); !isErr || !strings.Contains(text, "said no") {
		t.Fatalf("an order denied: %q %v", text, isErr)
	}
	if strings.Join(b.clicked, ",") != "e1,e2" {
		t.Fatalf("clicked %v", b.clicked)
	}
}
