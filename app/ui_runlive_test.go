package app

import (
	"context"
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
	rt, err := startRuntime(context.Background(), runtimeConfig{DataDir: t.TempDir(), Addr: "127.0.0.1:0",
		Log: slog.New(slog.DiscardHandler), Drivers: map[string]engines.Driver{"browsing": agent}})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	c := &client{f: apiFile{URL: rt.URL, Token: readToken(t, rt)}, http: httpClient()}
	var j jobs.Job
	if err := c.do(context.Background(), "POST", "/api/agent/assign", map[string]any{"title": "Check the checkout page", "agent": "browsing",
		"folder": t.TempDir(), "settings": map[string]any{"mode": "unattended"}}, &j); err != nil {
		t.Fatal(err)
	}

	ctx, cancel := context.WithTimeout(newBrowser(t), browserTestTime)
	defer cancel()
	if err := chromedp.Do(ctx, chromedp.Navigate(rt.SigninURL())); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "the board", `!!document.querySelector('[data-status]')`)
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
