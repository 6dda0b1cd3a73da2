package app

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ensemblework/ensemble/engines"
	"github.com/ensemblework/ensemble/engines/enginetest"
	"github.com/ensemblework/ensemble/runtime/jobs"
)

// browsingAgent is a stand-in agent that browses through its run's own MCP server, as a real
// agent calls browser_open: it opens each page in one tab and waits to be told to go on.
type browsingAgent struct {
	pages []string
	next  chan struct{}
	// login hands the first page to the person to sign in (browser_login_needed) before going on:
	// a page on this computer's own address is not taken for a sign-in by itself.
	login bool
}

func (browsingAgent) Name() string { return "browsing" }

func (a browsingAgent) Start(ctx context.Context, spec engines.Spec, h engines.Host) (engines.Run, error) {
	r := &pipeRun{done: make(chan struct{})}
	go func() {
		defer close(r.done)
		h.Event(engines.Event{At: time.Now(), Kind: engines.EventStarted, Session: "b1", Model: "browsing-1"})
		tr := &mcp.StreamableClientTransport{Endpoint: spec.MCP.URL, HTTPClient: enginetest.MCPClient(spec.MCP.Headers)}
		sess, err := mcp.NewClient(&mcp.Implementation{Name: "browsing"}, nil).Connect(ctx, tr, nil)
		if err != nil {
			h.Event(engines.Event{At: time.Now(), Kind: engines.EventError, Text: "connect: " + err.Error()})
			return
		}
		defer sess.Close()
		args := map[string]any{}
		for _, p := range a.pages {
			args["url"] = p
			res, err := sess.CallTool(ctx, &mcp.CallToolParams{Name: "browser_open", Arguments: args})
			if err != nil || res.IsError {
				h.Event(engines.Event{At: time.Now(), Kind: engines.EventError, Text: "browser_open failed"})
				return
			}
			args["tab"] = "t1"
			if a.login {
				res, err := sess.CallTool(ctx, &mcp.CallToolParams{Name: "browser_login_needed", Arguments: map[string]any{"tab": "t1",
					"reason": "to read the balance", "signedInUrl": "*/account"}})
				if err != nil || res.IsError {
					h.Event(engines.Event{At: time.Now(), Kind: engines.EventError, Text: "browser_login_needed failed"})
					return
				}
				a.login = false
			}
			h.Event(engines.Event{At: time.Now(), Kind: engines.EventMessage, Text: "Opened " + p})
			select {
			case <-a.next:
			case <-ctx.Done():
				return
			}
		}
	}()
	return r, nil
}

// startBrowsingRun starts a runtime whose agent is agent, gives it a task in mode, and opens its
// page in Chromium, signed in and live.
func startBrowsingRun(t *testing.T, agent browsingAgent, title, mode string) (*Runtime, *client, jobs.Job, context.Context) {
	t.Helper()
	rt, err := startRuntime(context.Background(), runtimeConfig{DataDir: t.TempDir(), Addr: "127.0.0.1:0",
		Log: slog.New(slog.DiscardHandler), Drivers: map[string]engines.Driver{"browsing": agent}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rt.Close() })
	c := &client{f: apiFile{URL: rt.URL, Token: readToken(t, rt)}, http: httpClient()}
	var j jobs.Job
	if err := c.do(context.Background(), "POST", "/api/agent/assign", map[string]any{"title": title, "agent": "browsing",
		"folder": t.TempDir(), "settings": map[string]any{"mode": mode}}, &j); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(newBrowser(t), browserTestTime)
	t.Cleanup(cancel)
	if err := chromedp.Do(ctx, chromedp.Navigate(rt.SigninURL())); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "the board, live", `document.querySelector('#live')?.dataset.state === 'live'`)
	return rt, c, j, ctx
}

// TestUIRunLivePicture: while a run's agent uses a tab, its task's page shows a small live
// picture of it above the trace; a page showing a token is not pictured, and says why; the
// picture goes when the run ends.
func TestUIRunLivePicture(t *testing.T) {
	needUI(t)
	site := http.NewServeMux()
	site.HandleFunc("/{$}", func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, `<!doctype html><title>Checkout preview</title><body style="font:18px sans-serif;margin:32px;background:#f4f7ff">
<h1>Checkout preview</h1><p>Three items in the cart, total <b>$42.10</b>.</p><button style="font-size:18px;padding:8px 16px">Place order</button></body>`)
	})
	site.HandleFunc("/token", func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, `<!doctype html><title>Tokens</title><h1>Your token</h1><p>ghp_0123456789abcdefghijklmnopqrstuvwxyzAB</p>`)
	})
	srv := httptest.NewServer(site)
	defer srv.Close()
	agent := browsingAgent{pages: []string{srv.URL + "/", srv.URL + "/token"}, next: make(chan struct{})}
	_, _, j, ctx := startBrowsingRun(t, agent, "Check the checkout page", "unattended")
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`(location.hash = '#/task/`+j.TaskID+`', true)`)); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "the live picture above the trace", `(() => {
		const f = document.querySelector('[data-testid="run-live"]');
		const img = f && f.querySelector('img');
		return !!img && img.complete && img.naturalWidth === 640 && f.textContent.includes('Checkout preview') && f.textContent.includes('127.0.0.1');
	})()`)
	screenshot(t, ctx, "run-live-1280.png", 1280)
	screenshot(t, ctx, "run-live-390.png", 390)

	agent.next <- struct{}{} // on to the page with a token
	waitFor(t, ctx, "the picture paused for the token", `(() => {
		const f = document.querySelector('[data-testid="run-live"]');
		return !!f && f.dataset.paused === 'secret_on_screen' && !f.querySelector('img') && f.textContent.includes('saved secret or a key');
	})()`)
	if html, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.body.innerText`)); strings.Contains(html, "ghp_") {
		t.Fatal("the page shows the token")
	}
	screenshot(t, ctx, "run-live-paused-390.png", 390)

	agent.next <- struct{}{} // the run ends
	waitFor(t, ctx, "the picture goes with the run", `!document.querySelector('[data-testid="run-live"]') && document.querySelector('.run-card[data-job-id]')?.dataset.status === 'done'`)
}

// TestUIRunSignInFromNeedsMe: a run no node follows meets a sign-in page; its question on Needs
// me opens the held tab's clean browser in the page (as from a phone, with no screen needed), the
// person signs in there with taps and typing, and the run goes on signed in by itself.
func TestUIRunSignInFromNeedsMe(t *testing.T) {
	needUI(t)
	site := signInSite(t)
	agent := browsingAgent{pages: []string{site.URL + "/account"}, next: make(chan struct{}), login: true}
	_, c, j, ctx := startBrowsingRun(t, agent, "Read my balance", "review")
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`(location.hash = '#/needs', true)`)); err != nil {
		t.Fatal(err)
	}
	need := `[data-need-id]`
	waitFor(t, ctx, "the run's sign-in on Needs me", `!!document.querySelector('`+need+` .need-open-browser') && document.querySelector('`+need+`').textContent.includes('127.0.0.1')`)
	press(t, ctx, need+` .need-open-browser`)
	signInThroughView(t, ctx, need, "run-signin-needs")
	waitFor(t, ctx, "the question gone once the sign-in is seen", `!document.querySelector('`+need+` .need-open-browser') && !document.querySelector('`+need+` .bv')`)
	for end := time.Now().Add(30 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		var trace struct {
			Events []struct {
				Kind string          `json:"kind"`
				Data json.RawMessage `json:"data"`
			} `json:"events"`
		}
		c.do(ctx, "GET", "/api/events/log?kinds=run.&subject="+j.ID, nil, &trace)
		var seen []string
		for _, e := range trace.Events {
			seen = append(seen, string(e.Data))
		}
		all := strings.Join(seen, "\n")
		if strings.Contains(all, "Signed in: the run's tab") && strings.Contains(all, "Opened "+site.URL+"/account") && !strings.Contains(all, "failed") {
			break
		}
		if time.Now().After(end) {
			t.Fatalf("the run did not go on signed in:\n%s", all)
		}
	}
	agent.next <- struct{}{}
	waitFor(t, ctx, "nothing left on Needs me", `!document.querySelector('`+need+`')`)
}
