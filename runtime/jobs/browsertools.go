package jobs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ensemblework/ensemble/browser"
)

// A run's browser and capture tools (spec 002 §8.16, spec 003's run MCP server): the same broker
// the nodes use, for the run's own work "run:<jobId>". They follow the run's mode through the
// judge like any MCP tool of its server (Ask asks before them; Allow for this run on one covers
// the run's other browser tools, and the same for capture). A run with the internet off opens
// only this computer's own addresses. What a screenshot captures is the run's evidence at once;
// one that shows a saved secret or a key is not kept. The run's tabs close when it ends.

// Browser is the Chromium broker as a run uses it; runtime/node.Browser is the whole of it.
type Browser interface {
	browser.Driver
	browser.Files
	browser.Holds
}

func (r *run) tabWork() browser.Work { return browser.Work("run:" + r.job.ID) }

// closeTabs ends the run's tabs, held ones too (the run ended).
func (r *run) closeTabs() {
	if r.s.opts.Browser == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := r.s.opts.Browser.CloseWork(ctx, r.tabWork()); err != nil {
		r.s.log.Info("jobs: close a run's tabs", "job", r.job.ID, "err", err)
	}
}

// Inputs of the run's browser tools.
type (
	BrowserOpenInput struct {
		URL     string `json:"url" jsonschema:"the page, http:// or https://"`
		Tab     string `json:"tab,omitempty" jsonschema:"a tab of this run's to go there in; a new tab when left out"`
		Private bool   `json:"private,omitempty" jsonschema:"a clean tab with no sign-ins"`
		Width   int    `json:"width,omitempty"`
		Height  int    `json:"height,omitempty"`
	}
	BrowserTabInput struct {
		Tab string `json:"tab" jsonschema:"the tab (t1, t2, …)"`
	}
	BrowserSnapshotInput struct {
		Tab         string `json:"tab"`
		Interactive bool   `json:"interactive,omitempty" jsonschema:"only what can be acted on"`
	}
	BrowserRefInput struct {
		Tab string `json:"tab"`
		Ref string `json:"ref" jsonschema:"the element's reference from the snapshot (e12)"`
	}
	BrowserTypeInput struct {
		Tab    string `json:"tab"`
		Ref    string `json:"ref"`
		Text   string `json:"text"`
		Submit bool   `json:"submit,omitempty"`
	}
	BrowserPressInput struct {
		Tab string `json:"tab"`
		Key string `json:"key" jsonschema:"Enter, Tab, Escape, ArrowDown, …"`
	}
	BrowserWaitInput struct {
		Tab       string `json:"tab"`
		Text      string `json:"text,omitempty"`
		Gone      string `json:"gone,omitempty"`
		Ref       string `json:"ref,omitempty"`
		URL       string `json:"url,omitempty"`
		Load      bool   `json:"load,omitempty"`
		TimeoutMs int    `json:"timeoutMs,omitempty"`
	}
	BrowserShotInput struct {
		Tab      string `json:"tab"`
		Width    int    `json:"width,omitempty"`
		Height   int    `json:"height,omitempty"`
		FullPage bool   `json:"fullPage,omitempty"`
		Ref      string `json:"ref,omitempty"`
	}
	CaptureShotInput struct {
		URL      string `json:"url" jsonschema:"the page or localhost app"`
		Width    int    `json:"width,omitempty"`
		Height   int    `json:"height,omitempty"`
		Device   string `json:"device,omitempty" jsonschema:"phone (390×844) or desktop (1280×800)"`
		FullPage bool   `json:"fullPage,omitempty"`
	}
)

// addBrowserTools puts the browser and capture tools on the run's server: all of them when this
// computer has a browser for Ensemble, else only capture_status, which says so.
func (r *run) addBrowserTools(srv *mcp.Server) {
	b := r.s.opts.Browser
	if b == nil {
		addWeb(srv, "capture_status", "What this computer can browse and capture with.", func(ctx context.Context, _ struct{}) (*mcp.CallToolResult, any, error) {
			return toolText("There is no browser for Ensemble on this computer, so a run has no browser or capture tools here."), nil, nil
		})
		return
	}
	w := r.tabWork()
	// page answers for the page an action left, as pageAnswer does, in the call's context.
	page := func(ctx context.Context) func(browser.Page, error) (*mcp.CallToolResult, any, error) {
		return func(p browser.Page, err error) (*mcp.CallToolResult, any, error) { return r.pageAnswer(ctx, b, p, err) }
	}
	addWeb(srv, "browser_open", "Open a web page in a tab of this run's own (the person's browser profile, or a private tab). A run with the internet off opens only this computer's own addresses.",
		func(ctx context.Context, in BrowserOpenInput) (*mcp.CallToolResult, any, error) {
			if err := r.mayOpen(in.URL); err != nil {
				return toolRefusal(err), nil, nil
			}
			if in.Tab != "" {
				return page(ctx)(b.Navigate(ctx, w, in.Tab, in.URL))
			}
			return page(ctx)(b.Open(ctx, browser.OpenOptions{Work: w, Owner: "owner", Private: in.Private, URL: in.URL, Network: r.network(), Width: in.Width, Height: in.Height}))
		})
	addWeb(srv, "browser_tabs", "List this run's open tabs.", func(ctx context.Context, _ struct{}) (*mcp.CallToolResult, any, error) {
		tabs := b.Tabs(w)
		raw, _ := json.Marshal(tabs)
		return toolText(string(raw)), nil, nil
	})
	addWeb(srv, "browser_close", "Close one of this run's tabs.", func(ctx context.Context, in BrowserTabInput) (*mcp.CallToolResult, any, error) {
		if err := b.CloseTab(ctx, w, in.Tab); err != nil {
			return toolRefusal(runBrowserError(err)), nil, nil
		}
		return toolText("Closed " + in.Tab + "."), nil, nil
	})
	addWeb(srv, "browser_snapshot", "Read a tab's page as an accessibility tree with references (e12) for click and type.", func(ctx context.Context, in BrowserSnapshotInput) (*mcp.CallToolResult, any, error) {
		sn, err := b.Snapshot(ctx, w, in.Tab, browser.SnapshotOptions{Interactive: in.Interactive})
		if err != nil {
			return toolRefusal(runBrowserError(err)), nil, nil
		}
		if sn.SignIn != nil && !sn.SignIn.HintOnly {
			return r.pageAnswer(ctx, b, sn.Page, nil)
		}
		r.snaps.Keep(in.Tab, sn.Text)
		return toolText(pageLine(sn.Page) + "\n" + fencePage(r.hide(sn.Text))), nil, nil
	})
	addWeb(srv, "browser_click", "Click an element of a tab's page by its reference. A click that orders, pays, sends, deletes or publishes, which the task did not ask for, is asked on Needs me first.", func(ctx context.Context, in BrowserRefInput) (*mcp.CallToolResult, any, error) {
		if err := r.judgeClick(ctx, b, in.Tab, in.Ref); err != nil {
			return toolRefusal(err), nil, nil
		}
		return page(ctx)(b.Click(ctx, w, in.Tab, in.Ref))
	})
	addWeb(srv, "browser_type", "Type text into a field (submit presses Enter). Never a password or a saved secret: hand a sign-in to the person with browser_login_needed.", func(ctx context.Context, in BrowserTypeInput) (*mcp.CallToolResult, any, error) {
		if r.hide(in.Text) != in.Text {
			return toolRefusal(errors.New("that text holds one of the person's saved secrets, which a run never types; hand the sign-in to the person with browser_login_needed")), nil, nil
		}
		return page(ctx)(b.Type(ctx, w, in.Tab, in.Ref, in.Text, in.Submit))
	})
	addWeb(srv, "browser_press", "Press a key in a tab.", func(ctx context.Context, in BrowserPressInput) (*mcp.CallToolResult, any, error) {
		return page(ctx)(b.Press(ctx, w, in.Tab, in.Key))
	})
	addWeb(srv, "browser_wait", "Wait for text, an element, the address or the page's load in a tab.", func(ctx context.Context, in BrowserWaitInput) (*mcp.CallToolResult, any, error) {
		return page(ctx)(b.Wait(ctx, w, in.Tab, browser.WaitOptions{Text: in.Text, Gone: in.Gone, Ref: in.Ref, URL: in.URL, Load: in.Load, Timeout: time.Duration(in.TimeoutMs) * time.Millisecond}))
	})
	addWeb(srv, "browser_screenshot", "A screenshot of a tab (password fields blanked), kept as this run's evidence: the answer names its id for report_result's checks.", func(ctx context.Context, in BrowserShotInput) (*mcp.CallToolResult, any, error) {
		shot, err := b.Screenshot(ctx, w, in.Tab, browser.ShotOptions{Width: in.Width, Height: in.Height, FullPage: in.FullPage, Ref: in.Ref})
		if err != nil {
			return toolRefusal(runBrowserError(err)), nil, nil
		}
		return r.shotAnswer(r.keepShot(shot))
	})
	addWeb(srv, "browser_extract", "A tab's page as Markdown, with its tables and products.", func(ctx context.Context, in BrowserTabInput) (*mcp.CallToolResult, any, error) {
		x, err := b.Extract(ctx, w, in.Tab)
		if err != nil {
			return toolRefusal(runBrowserError(err)), nil, nil
		}
		return toolText(pageLine(x.Page) + "\n" + fencePage(r.hide(x.Markdown))), nil, nil
	})
	addWeb(srv, "browser_console", "A tab's console messages and uncaught exceptions.", func(ctx context.Context, in BrowserTabInput) (*mcp.CallToolResult, any, error) {
		es, err := b.Console(w, in.Tab)
		if err != nil {
			return toolRefusal(runBrowserError(err)), nil, nil
		}
		raw, _ := json.Marshal(es)
		return toolText(fencePage(r.hide(string(raw)))), nil, nil
	})
	addWeb(srv, "browser_network_errors", "A tab's failed requests and 4xx/5xx answers.", func(ctx context.Context, in BrowserTabInput) (*mcp.CallToolResult, any, error) {
		es, err := b.NetworkErrors(w, in.Tab)
		if err != nil {
			return toolRefusal(runBrowserError(err)), nil, nil
		}
		raw, _ := json.Marshal(es)
		return toolText(fencePage(r.hide(string(raw)))), nil, nil
	})
	addWeb(srv, "capture_screenshot", "A screenshot of a page or localhost app at a viewport (device phone or desktop, or width and height), in a private tab closed after; kept as this run's evidence.",
		func(ctx context.Context, in CaptureShotInput) (*mcp.CallToolResult, any, error) {
			if err := r.mayOpen(in.URL); err != nil {
				return toolRefusal(err), nil, nil
			}
			wd, ht := in.Width, in.Height
			if wd == 0 && ht == 0 {
				wd, ht = 1280, 800
				if in.Device == "phone" {
					wd, ht = 390, 844
				}
			}
			p, err := b.Open(ctx, browser.OpenOptions{Work: w, Private: true, URL: in.URL, Network: r.network(), Width: wd, Height: ht})
			if err != nil {
				return toolRefusal(runBrowserError(err)), nil, nil
			}
			defer b.CloseTab(context.WithoutCancel(ctx), w, p.Tab)
			b.Wait(ctx, w, p.Tab, browser.WaitOptions{Load: true})
			shot, err := b.Screenshot(ctx, w, p.Tab, browser.ShotOptions{Width: wd, Height: ht, FullPage: in.FullPage})
			if err != nil {
				return toolRefusal(runBrowserError(err)), nil, nil
			}
			return r.shotAnswer(r.keepShot(shot))
		})
	addWeb(srv, "capture_status", "What this computer can browse and capture with.", func(ctx context.Context, _ struct{}) (*mcp.CallToolResult, any, error) {
		raw, _ := json.Marshal(b.Status(ctx))
		return toolText(string(raw)), nil, nil
	})
	r.addBrowserFileTools(srv, b)
	r.addLoginTool(srv, b)
}

// webAnnotations mark the browser tools as reaching the web.
var webAnnotations = &mcp.ToolAnnotations{OpenWorldHint: ptr(true), DestructiveHint: ptr(false)}

// addWeb adds one browser or capture tool.
func addWeb[In any](srv *mcp.Server, name, desc string, f func(context.Context, In) (*mcp.CallToolResult, any, error)) {
	mcp.AddTool(srv, &mcp.Tool{Name: name, Annotations: webAnnotations, Description: desc}, func(ctx context.Context, _ *mcp.CallToolRequest, in In) (*mcp.CallToolResult, any, error) {
		return f(ctx, in)
	})
}

// network is where the run's tabs may go: only this computer with the internet off.
func (r *run) network() browser.Network {
	if r.job.Settings.Internet {
		return browser.Anywhere
	}
	return browser.LocalOnly
}

// mayOpen refuses what a run's tab never opens: Ensemble's own web app, a page that is not
// http(s), and the public web with the internet off.
func (r *run) mayOpen(raw string) error {
	if r.s.opts.RefuseURL != nil {
		if why := r.s.opts.RefuseURL(raw); why != "" {
			return errors.New(why)
		}
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("a tab opens http:// or https:// addresses, not %q", raw)
	}
	if !r.job.Settings.Internet && !loopbackHost(u.Hostname()) {
		return fmt.Errorf("this run has the internet off, so its tabs open only this computer's own addresses (localhost)")
	}
	return nil
}

func loopbackHost(h string) bool {
	ip := net.ParseIP(h)
	return h == "localhost" || strings.HasSuffix(h, ".localhost") || ip != nil && ip.IsLoopback()
}

func (r *run) hide(s string) string {
	s = Redact(s)
	if r.s.opts.Hide != nil {
		s = r.s.opts.Hide(s)
	}
	return s
}

func runBrowserError(err error) error {
	switch {
	case errors.Is(err, browser.ErrSensitive):
		return errors.New("that tab waits for the person (a sign-in or a human check); nothing reads or drives it until they finish")
	case errors.Is(err, browser.ErrNoTab):
		return errors.New("there is no such tab: browser_tabs lists this run's")
	case errors.Is(err, browser.ErrNotYours):
		return errors.New("that tab belongs to other work")
	case errors.Is(err, browser.ErrNoRef):
		return errors.New("no element has that reference any more: take a new browser_snapshot")
	case errors.Is(err, browser.ErrNoChromium):
		return errors.New("there is no Chromium or Chrome on this computer")
	}
	return err
}

// pageLine is what an action left the tab showing, in a line; the title is the page's own.
func pageLine(p browser.Page) string {
	u, _ := url.Parse(p.URL)
	host := ""
	if u != nil {
		host = u.Hostname()
	}
	s := fmt.Sprintf("Tab %s: %s “%s”.", p.Tab, host, trim(p.Title, 120))
	for _, pop := range p.Popups {
		s += fmt.Sprintf(" It opened a new window %s: use tab %s.", pop.ID, pop.ID)
	}
	if p.SignIn != nil && p.SignIn.HintOnly {
		s += fmt.Sprintf(" The page asks for a sign-in (%s); on this computer's own address or a private tab that is the run's to do, never with the person's password or a saved secret.", p.SignIn.Why)
	}
	return s
}

// fencePage bounds a page's words and fences them as untrusted.
func fencePage(s string) string { return browser.Fence(strings.ToValidUTF8(clip(s, 8000), "")) }

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
