package node

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"strings"
	"time"

	"github.com/ensemblework/ensemble/browser"
	"github.com/ensemblework/ensemble/runtime/computer"
	"github.com/ensemblework/ensemble/runtime/events"
	"github.com/ensemblework/ensemble/runtime/judge"
	"github.com/ensemblework/ensemble/runtime/ledger"
	"github.com/ensemblework/ensemble/runtime/tools"
)

// The node's browser tools (spec 002 §8.16): its own tabs in the computer's Ensemble browser,
// work "node:<id>:own", so they last across its conversations. Public pages open without
// asking; this computer's own addresses and its network's ask once each (the decision order's
// OpBrowse). Page text reaches the model bounded and fenced as untrusted; the ledger keeps the
// tool, the tab and the site, never what a page said or what was typed.
const (
	ToolBrowserOpen       = "browser_open"
	ToolBrowserTabs       = "browser_tabs"
	ToolBrowserClose      = "browser_close"
	ToolBrowserSnapshot   = "browser_snapshot"
	ToolBrowserClick      = "browser_click"
	ToolBrowserType       = "browser_type"
	ToolBrowserPress      = "browser_press"
	ToolBrowserWait       = "browser_wait"
	ToolBrowserScreenshot = "browser_screenshot"
	ToolBrowserView       = "browser_view"
	ToolBrowserFetch      = "browser_fetch"
	ToolBrowserExtract    = "browser_extract"
	ToolBrowserConsole    = "browser_console"
	ToolBrowserNetErrors  = "browser_network_errors"
	ToolBrowserUpload     = "browser_upload"
	ToolBrowserDownload   = "browser_download"
	ToolLoginNeeded       = "browser_login_needed"
	ToolLoginCheck        = "browser_login_check"
)

// browserTools are offered by need; browserTabTools only to a node that has tabs open.
var (
	browserTools = []string{ToolBrowserOpen, ToolBrowserSnapshot, ToolBrowserClick, ToolBrowserType, ToolBrowserPress, ToolBrowserWait,
		ToolBrowserScreenshot, ToolBrowserView, ToolBrowserFetch, ToolBrowserExtract, ToolBrowserConsole, ToolBrowserNetErrors,
		ToolBrowserUpload, ToolBrowserDownload, ToolLoginNeeded, ToolLoginCheck, ToolCaptureScreenshot, ToolCaptureCheck, ToolCaptureStatus}
	browserTabTools = []string{ToolBrowserTabs, ToolBrowserClose}
)

func init() {
	for _, name := range append(append([]string{}, browserTools...), browserTabTools...) {
		ownerOnly[name] = true
		switch name {
		case ToolBrowserTabs, ToolBrowserSnapshot, ToolBrowserConsole, ToolBrowserNetErrors, ToolCaptureCheck, ToolCaptureStatus, ToolBrowserExtract:
		default:
			actingTools[name] = true
		}
	}
}

// browserWordsRe finds a turn about web pages, sites, screenshots or signing in.
var browserWordsRe = regexp.MustCompile(`(?i)\b(browser|browse|web ?pages?|pages?|websites?|sites?|urls?|links?|https?|www|tabs?|screenshots?|capture|snapshot|open|click|sign(ed)? ?in|log(ged)? ?in|login|captcha|human check|price|prices|shop|amazon|google|github|localhost)\b|https?://|\b[\w-]+\.(com|org|net|io|dev|app|ai|co|edu|gov)\b`)

// browserToolsFor are the browser and capture tools a turn offers: only a turn its owner started
// and only they read, where the words are about the web or the turn carries on work; the tab
// tools only while the node has tabs.
func browserToolsFor(t Turn, n Node, text string, has, tabs bool) []string {
	if !has || !t.ByOwner || n.ParentID != "" {
		return nil
	}
	if t.Reason == ReasonMessage && !browserWordsRe.MatchString(text) {
		return nil
	}
	out := append([]string{}, browserTools...)
	if tabs {
		out = append(out, browserTabTools...)
	}
	return out
}

// closeNodeTabs ends a deleted node's tabs, held ones too, and the sign-ins they waited for.
func (s *Service) closeNodeTabs(ctx context.Context, nodeID string) {
	if s.cfg.Browser == nil {
		return
	}
	if err := s.cfg.Browser.CloseWork(ctx, nodeWork(nodeID)); err != nil {
		s.log.Info("node: close a deleted node's tabs", "node", nodeID, "err", err)
	}
	s.endTabLogins(ctx, nodeID, "")
}

// endTabLogins ends the login cards still waiting for a tab its work closed ("" for every tab):
// their work ended, so they wake no one.
func (s *Service) endTabLogins(ctx context.Context, nodeID, tab string) {
	for {
		m, ok := s.waitingLogin(ctx, nodeID, string(nodeWork(nodeID)), tab)
		if !ok {
			return
		}
		if _, err := s.endLogin(ctx, m.ID, LoginEnded, "closed", true); err != nil {
			s.log.Info("node: end a closed tab's sign-in", "card", m.ID, "err", err)
			return
		}
	}
}

// nodeWork is the work a node's own tabs belong to.
func nodeWork(nodeID string) browser.Work { return browser.Work("node:" + nodeID + ":own") }

// browserOwner is whose persistent profile a node's tabs use: this runtime has one person.
const browserOwner = "owner"

// hasTabs reports whether the node has tabs open.
func (s *Service) hasTabs(nodeID string) bool {
	return s.cfg.Browser != nil && len(s.cfg.Browser.Tabs(nodeWork(nodeID))) > 0
}

var errNoBrowser = errors.New("The browser is not available on this computer: capture_status says why.")

// browserTurn is the turn of a browser tool's call, where it may be used at all.
func browserTurn(tc *tools.ToolContext) (*turnCtx, error) {
	c, err := ownerTurn(tc, "The browser is used only in a turn your owner started.")
	if err != nil {
		return nil, err
	}
	if c.s.cfg.Browser == nil {
		return nil, errNoBrowser
	}
	return c, nil
}

// browserRun is a browser tool's Run: its turn checked, its call ledgered by tab and site.
func browserRun[In any](tool string, tabOf func(In) (tab, site string), fn func(ctx context.Context, c *turnCtx, in In) (tools.Result, error)) tools.Typed[In] {
	return tools.Typed[In]{Run: func(ctx context.Context, tc *tools.ToolContext, in In) (tools.Result, error) {
		c, err := browserTurn(tc)
		if err != nil {
			return tools.Result{}, err
		}
		tab, site := "", ""
		if tabOf != nil {
			tab, site = tabOf(in)
		}
		waited := false
		if tab != "" {
			if waited, err = c.s.waitTab(ctx, c.node.ID, tab); err != nil {
				return tools.Result{}, err
			}
		}
		res, err := fn(ctx, c, in)
		c.s.noteBrowser(ctx, c.node.ID, tool, tab, site, err)
		if waited && err == nil {
			res.Summary = "Your owner had control of this tab and handed it back; the page may have changed. " + res.Summary
		}
		return res, browserError(err)
	}}
}

// browserError turns the broker's errors into the sentence the node reads.
func browserError(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, browser.ErrSensitive):
		return errors.New("That tab waits for your owner (a sign-in or a human check): nothing reads or drives it until they finish, and you are woken then.")
	case errors.Is(err, browser.ErrNoTab):
		return errors.New("There is no such tab: browser_tabs lists yours.")
	case errors.Is(err, browser.ErrNotYours):
		return errors.New("That tab belongs to other work; open one of your own with browser_open.")
	case errors.Is(err, browser.ErrNoRef):
		return errors.New("No element has that reference any more: take a new browser_snapshot.")
	case errors.Is(err, browser.ErrRefused):
		return errors.New("That address is not one this tab may open.")
	case errors.Is(err, browser.ErrNoChromium):
		return errors.New("There is no Chromium or Chrome on this computer: capture_status says what to install.")
	}
	return err
}

// decideBrowse runs a page's address through the decision order (OpBrowse): refused, allowed,
// or asked on a computer card that the call waits for. It also refuses Ensemble's own UI and a
// public page while the owner's run profile has the internet off.
func (s *Service) decideBrowse(ctx context.Context, c *turnCtx, tool, raw string) error {
	if why := s.refuseEnsemble(raw); why != "" {
		return errors.New(why)
	}
	u, err := url.Parse(raw)
	if err == nil && !s.nodeInternet(ctx) && !computer.Nearby(u.Hostname()) {
		return errors.New("Your owner's run profile has the internet off, so only this computer's own addresses open.")
	}
	if s.cfg.Computer == nil {
		if err == nil && computer.Nearby(u.Hostname()) {
			return errors.New("This computer's own addresses open only where the computer tools are available.")
		}
		return nil
	}
	folder, err := s.cfg.Computer.NodeFolder(c.node.Slug)
	if err != nil {
		return err
	}
	return s.decideCall(ctx, c, tool, computer.Call{Op: computer.OpBrowse, Folder: folder, URL: raw},
		"Your owner's answer did not cover this address; ask again only if it is still needed.")
}

// decideCall runs a browser call through the decision order: refused, allowed, or asked on a
// computer card that the call waits for; uncovered is the answer when the card's answer did not
// cover the call after all.
func (s *Service) decideCall(ctx context.Context, c *turnCtx, tool string, call computer.Call, uncovered string) error {
	for asked := false; ; asked = true {
		pol, err := s.computerPolicy(ctx, c)
		if err != nil {
			return err
		}
		pol.Granted = s.grantsOf(c.node.ID)
		d := computer.Decide(call, pol)
		switch {
		case d.Decision == judge.Refuse:
			return errors.New(d.Reason)
		case d.Allowed():
			if d.Rung == computer.RungOnce {
				s.useGrants(c.node.ID, call)
			}
			return nil
		case asked:
			return errors.New(uncovered)
		}
		approved, out, err := s.askComputer(ctx, c, tool, call, d)
		if err != nil {
			return err
		}
		if !approved {
			return errParked{out}
		}
	}
}

// errParked is a call that waits on a card: its text is the tool's answer, not a failure.
type errParked struct{ text string }

func (e errParked) Error() string { return e.text }

// nodeInternet reports whether the owner's run profile has the internet on (the default).
func (s *Service) nodeInternet(ctx context.Context) bool {
	pp, ok := s.cfg.Runs.(tools.ProfilePicker)
	if !ok {
		return true
	}
	p, found, err := pp.PickProfile(ctx, "")
	return err != nil || !found || p.Settings.Internet == nil || *p.Settings.Internet
}

// network is the Network the node's tabs open with.
func (s *Service) network(ctx context.Context) browser.Network {
	if s.nodeInternet(ctx) {
		return browser.Anywhere
	}
	return browser.LocalOnly
}

// refuseEnsemble is why an address is Ensemble itself (Config.Refuse, the runtime's own UI and
// its relay), or "".
func (s *Service) refuseEnsemble(raw string) string {
	if s.cfg.RefuseURL == nil {
		return ""
	}
	return s.cfg.RefuseURL(raw)
}

// siteOf is an address's host, for the ledger and the cards: never its path or query.
func siteOf(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return ""
	}
	return u.Hostname()
}

// KindBrowserTool is a node's browser or capture call, ledgered by tool, tab and site (host
// only); never page text, typed text or a value.
const KindBrowserTool events.Kind = "node.browser_tool"

// BrowserTool is the data of a KindBrowserTool event.
type BrowserTool struct {
	NodeID string `json:"nodeId"`
	Tool   string `json:"tool"`
	Tab    string `json:"tab,omitempty"`
	Site   string `json:"site,omitempty"`
	Failed bool   `json:"failed,omitempty"`
}

func (s *Service) noteBrowser(ctx context.Context, nodeID, tool, tab, site string, err error) {
	var parked errParked
	ev := BrowserTool{NodeID: nodeID, Tool: tool, Tab: tab, Site: site, Failed: err != nil && !errors.As(err, &parked)}
	werr := s.cfg.Writer.Exec(context.WithoutCancel(ctx), func(tx *ledger.Tx) error {
		return tx.Emit(KindBrowserTool, nodeID, ev)
	})
	if werr != nil {
		s.log.Warn("node: ledger a browser call", "tool", tool, "err", werr)
	}
}

// maxPageText bounds the page text one answer carries.
const maxPageText = 8000

// fenceUntrusted bounds a page's own words and fences them as untrusted for the model.
func fenceUntrusted(s string) string { return browser.Fence(clipText(s, maxPageText)) }

// pageSummary is what an action left the tab showing, in a few lines.
func pageSummary(p browser.Page) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Tab %s: %s", p.Tab, siteOf(p.URL))
	if p.Title != "" {
		fmt.Fprintf(&b, " “%s”", oneLineOf(p.Title, 120))
	}
	if p.Status >= 400 {
		fmt.Fprintf(&b, " (HTTP %d)", p.Status)
	}
	b.WriteString(".")
	for _, pop := range p.Popups {
		fmt.Fprintf(&b, " It opened a new window %s (%s, %s): use tab %s.", pop.ID, oneLineOf(pop.Title, 80), siteOf(pop.URL), pop.ID)
	}
	if p.SignIn != nil && p.SignIn.HintOnly {
		fmt.Fprintf(&b, " The page asks for a sign-in (%s); on this computer's own or a private tab that is yours to do, never with a saved secret.", p.SignIn.Why)
	}
	if p.Note != "" {
		b.WriteString(" " + p.Note)
	}
	return b.String()
}

// afterPage is the answer for a page an action left: a page that needs the owner's sign-in or
// human check is handed to them on a card, and the turn parks.
func (s *Service) afterPage(ctx context.Context, c *turnCtx, p browser.Page) (tools.Result, error) {
	if p.SignIn != nil && !p.SignIn.HintOnly {
		return s.loginNeeded(ctx, c, loginIn{Tab: p.Tab, Purpose: p.SignIn.Purpose, Reason: p.SignIn.Why}, p.SignIn.Origin)
	}
	return tools.Result{Summary: pageSummary(p), Data: p}, nil
}

type openIn struct {
	URL     string `json:"url" jsonschema:"the page, http:// or https://" check:"minLength=1,maxLength=4000"`
	Tab     string `json:"tab,omitempty" jsonschema:"a tab of yours to go there in; a new tab when left out" check:"maxLength=20"`
	Private bool   `json:"private,omitempty" jsonschema:"a clean tab with no sign-ins, forgotten when it closes"`
	Width   int    `json:"width,omitempty" check:"minimum=200,maximum=4000"`
	Height  int    `json:"height,omitempty" check:"minimum=200,maximum=4000"`
}
type tabIn struct {
	Tab string `json:"tab" jsonschema:"the tab (t1, t2, …)" check:"minLength=1,maxLength=20"`
}
type snapshotIn struct {
	Tab         string `json:"tab" check:"minLength=1,maxLength=20"`
	Interactive bool   `json:"interactive,omitempty" jsonschema:"only what can be acted on, with the headings around it"`
}
type clickIn struct {
	Tab string `json:"tab" check:"minLength=1,maxLength=20"`
	Ref string `json:"ref" jsonschema:"the element's reference from the snapshot (e12)" check:"minLength=1,maxLength=20"`
}
type typeIn struct {
	Tab    string `json:"tab" check:"minLength=1,maxLength=20"`
	Ref    string `json:"ref" check:"minLength=1,maxLength=20"`
	Text   string `json:"text" check:"maxLength=10000"`
	Submit bool   `json:"submit,omitempty" jsonschema:"press Enter after it"`
}
type pressIn struct {
	Tab string `json:"tab" check:"minLength=1,maxLength=20"`
	Key string `json:"key" jsonschema:"Enter, Tab, Escape, ArrowDown, …" check:"minLength=1,maxLength=40"`
}
type waitIn struct {
	Tab       string `json:"tab" check:"minLength=1,maxLength=20"`
	Text      string `json:"text,omitempty" jsonschema:"wait for this text on the page" check:"maxLength=500"`
	Gone      string `json:"gone,omitempty" jsonschema:"wait for this text to leave the page" check:"maxLength=500"`
	Ref       string `json:"ref,omitempty" jsonschema:"wait for this element to be visible" check:"maxLength=20"`
	URL       string `json:"url,omitempty" jsonschema:"wait for the address to contain this" check:"maxLength=2000"`
	Load      bool   `json:"load,omitempty" jsonschema:"wait for the page to finish loading"`
	TimeoutMs int    `json:"timeoutMs,omitempty" jsonschema:"30000 by default, 120000 at most" check:"minimum=0,maximum=120000"`
}
type shotIn struct {
	Tab      string `json:"tab" check:"minLength=1,maxLength=20"`
	Width    int    `json:"width,omitempty" check:"minimum=0,maximum=4000"`
	Height   int    `json:"height,omitempty" check:"minimum=0,maximum=4000"`
	FullPage bool   `json:"fullPage,omitempty"`
	Ref      string `json:"ref,omitempty" jsonschema:"only this element" check:"maxLength=20"`
}
type viewIn struct {
	URL   string `json:"url,omitempty" jsonschema:"the page to show; or name a tab" check:"maxLength=4000"`
	Tab   string `json:"tab,omitempty" check:"maxLength=20"`
	Focus string `json:"focus,omitempty" jsonschema:"what to show, in words (the stock chart)" check:"maxLength=200"`
}
type fetchIn struct {
	URL string `json:"url" jsonschema:"the file's address (a PDF, an image, a CSV)" check:"minLength=1,maxLength=4000"`
	Tab string `json:"tab,omitempty" jsonschema:"fetch with this tab's sign-ins" check:"maxLength=20"`
}
type extractIn struct {
	Tab string `json:"tab,omitempty" check:"maxLength=20"`
	URL string `json:"url,omitempty" jsonschema:"a page to open and read; or name a tab" check:"maxLength=4000"`
}
type uploadIn struct {
	Tab  string `json:"tab" check:"minLength=1,maxLength=20"`
	Ref  string `json:"ref" jsonschema:"the file input's reference" check:"minLength=1,maxLength=20"`
	Path string `json:"path" jsonschema:"the file on the computer, relative to your folder or absolute" check:"minLength=1,maxLength=1000"`
}

func tabSite(tab string) (string, string) { return tab, "" }

func browserToolDefs(def func(name, desc string) tools.Tool) []tools.Tool {
	return append([]tools.Tool{
		tools.Define(def(ToolBrowserOpen, "Open a web page in your own tab of your owner's Ensemble browser (their sign-ins stay), or in a private tab. Public pages open at once; this computer's own and its network's addresses ask your owner once each."),
			browserRun(ToolBrowserOpen, func(in openIn) (string, string) { return in.Tab, siteOf(in.URL) }, func(ctx context.Context, c *turnCtx, in openIn) (tools.Result, error) {
				return c.s.browserOpen(ctx, c, in)
			})),
		tools.Define(def(ToolBrowserTabs, "List your open tabs."),
			browserRun(ToolBrowserTabs, nil, func(ctx context.Context, c *turnCtx, _ struct{}) (tools.Result, error) {
				tabs := c.s.cfg.Browser.Tabs(nodeWork(c.node.ID))
				var lines []string
				for _, t := range tabs {
					line := fmt.Sprintf("%s: %s “%s”", t.ID, siteOf(t.URL), oneLineOf(t.Title, 80))
					if t.Sensitive != "" {
						line += " (waits for your owner)"
					}
					lines = append(lines, line)
				}
				if len(lines) == 0 {
					return tools.Result{Summary: "You have no tabs open."}, nil
				}
				return tools.Result{Summary: strings.Join(lines, "\n"), Data: tabs}, nil
			})),
		tools.Define(def(ToolBrowserClose, "Close one of your tabs."),
			browserRun(ToolBrowserClose, func(in tabIn) (string, string) { return tabSite(in.Tab) }, func(ctx context.Context, c *turnCtx, in tabIn) (tools.Result, error) {
				if err := c.s.cfg.Browser.CloseTab(ctx, nodeWork(c.node.ID), in.Tab); err != nil {
					return tools.Result{}, err
				}
				c.s.endTabLogins(ctx, c.node.ID, in.Tab)
				c.s.snaps.Forget(snapKey(nodeWork(c.node.ID), in.Tab))
				return tools.Result{Summary: "Closed " + in.Tab + "."}, nil
			})),
		tools.Define(def(ToolBrowserSnapshot, "Read a tab's page as an accessibility tree, one element a line, with references (e12) for click and type."),
			browserRun(ToolBrowserSnapshot, func(in snapshotIn) (string, string) { return tabSite(in.Tab) }, func(ctx context.Context, c *turnCtx, in snapshotIn) (tools.Result, error) {
				sn, err := c.s.cfg.Browser.Snapshot(ctx, nodeWork(c.node.ID), in.Tab, browser.SnapshotOptions{Interactive: in.Interactive})
				if err != nil {
					return tools.Result{}, err
				}
				if sn.SignIn != nil && !sn.SignIn.HintOnly {
					return c.s.afterPage(ctx, c, sn.Page)
				}
				c.s.snaps.Keep(snapKey(nodeWork(c.node.ID), in.Tab), sn.Text)
				return tools.Result{Summary: pageSummary(sn.Page) + fmt.Sprintf(" %d references.\n", sn.Refs) + fenceUntrusted(sn.Text), Data: sn.Page}, nil
			})),
		tools.Define(def(ToolBrowserClick, "Click an element of a tab's page by its reference."),
			browserRun(ToolBrowserClick, func(in clickIn) (string, string) { return tabSite(in.Tab) }, func(ctx context.Context, c *turnCtx, in clickIn) (tools.Result, error) {
				if err := c.s.judgeClick(ctx, c, in.Tab, in.Ref); err != nil {
					return tools.Result{}, err
				}
				p, err := c.s.cfg.Browser.Click(ctx, nodeWork(c.node.ID), in.Tab, in.Ref)
				if err != nil {
					return tools.Result{}, err
				}
				return c.s.afterPage(ctx, c, p)
			})),
		tools.Define(def(ToolBrowserType, "Type text into a field of a tab's page (submit presses Enter). Never a password, a code or a saved secret: hand a sign-in to your owner with browser_login_needed."),
			browserRun(ToolBrowserType, func(in typeIn) (string, string) { return tabSite(in.Tab) }, func(ctx context.Context, c *turnCtx, in typeIn) (tools.Result, error) {
				if c.s.hide(in.Text) != in.Text {
					return tools.Result{}, errors.New("That text holds one of your owner's saved secrets, which a node never types: hand the sign-in to your owner with browser_login_needed.")
				}
				p, err := c.s.cfg.Browser.Type(ctx, nodeWork(c.node.ID), in.Tab, in.Ref, in.Text, in.Submit)
				if err != nil {
					return tools.Result{}, err
				}
				return c.s.afterPage(ctx, c, p)
			})),
		tools.Define(def(ToolBrowserPress, "Press a key in a tab (Enter, Tab, Escape, ArrowDown, …)."),
			browserRun(ToolBrowserPress, func(in pressIn) (string, string) { return tabSite(in.Tab) }, func(ctx context.Context, c *turnCtx, in pressIn) (tools.Result, error) {
				p, err := c.s.cfg.Browser.Press(ctx, nodeWork(c.node.ID), in.Tab, in.Key)
				if err != nil {
					return tools.Result{}, err
				}
				return c.s.afterPage(ctx, c, p)
			})),
		tools.Define(def(ToolBrowserWait, "Wait for one thing in a tab: text to appear or go, an element, the address, or the page to load."),
			browserRun(ToolBrowserWait, func(in waitIn) (string, string) { return tabSite(in.Tab) }, func(ctx context.Context, c *turnCtx, in waitIn) (tools.Result, error) {
				p, err := c.s.cfg.Browser.Wait(ctx, nodeWork(c.node.ID), in.Tab, browser.WaitOptions{Text: in.Text, Gone: in.Gone, Ref: in.Ref, URL: in.URL,
					Load: in.Load, Timeout: time.Duration(in.TimeoutMs) * time.Millisecond})
				if err != nil {
					return tools.Result{}, err
				}
				return c.s.afterPage(ctx, c, p)
			})),
		tools.Define(def(ToolBrowserScreenshot, "Take a screenshot of a tab (password fields are blanked). It appears with your reply and is kept as evidence."),
			browserRun(ToolBrowserScreenshot, func(in shotIn) (string, string) { return tabSite(in.Tab) }, func(ctx context.Context, c *turnCtx, in shotIn) (tools.Result, error) {
				shot, err := c.s.cfg.Browser.Screenshot(ctx, nodeWork(c.node.ID), in.Tab, browser.ShotOptions{Width: in.Width, Height: in.Height, FullPage: in.FullPage, Ref: in.Ref})
				if err != nil {
					return tools.Result{}, err
				}
				k, err := c.s.keepShot(ctx, c, shot, "Screenshot of "+siteOf(shot.URL))
				if err != nil {
					return tools.Result{}, err
				}
				return tools.Result{Summary: pageSummary(shot.Page) + " " + k.summary(), Data: k}, nil
			})),
		tools.Define(def(ToolBrowserView, "Show your owner a page in one call: open it (or a tab), a screenshot that appears with your reply, and the page's text for you."),
			browserRun(ToolBrowserView, func(in viewIn) (string, string) { return in.Tab, siteOf(in.URL) }, func(ctx context.Context, c *turnCtx, in viewIn) (tools.Result, error) {
				return c.s.browserView(ctx, c, in)
			})),
		tools.Define(def(ToolBrowserFetch, "Download a file (a PDF, an image, a CSV) with the browser's sign-ins into your evidence. Nothing shows by itself: node_share_file shows it."),
			browserRun(ToolBrowserFetch, func(in fetchIn) (string, string) { return in.Tab, siteOf(in.URL) }, func(ctx context.Context, c *turnCtx, in fetchIn) (tools.Result, error) {
				if err := c.s.decideBrowse(ctx, c, ToolBrowserFetch, in.URL); err != nil {
					return parkedOr(err)
				}
				dir, err := c.s.downloadsFolder(c.node)
				if err != nil {
					return tools.Result{}, err
				}
				f, err := c.s.cfg.Browser.Fetch(ctx, nodeWork(c.node.ID), in.Tab, in.URL, dir)
				return fileResult(f, err)
			})),
		tools.Define(def(ToolBrowserExtract, "Read a page (a tab, or an address to open) as Markdown, with its tables and the products and prices on it."),
			browserRun(ToolBrowserExtract, func(in extractIn) (string, string) { return in.Tab, siteOf(in.URL) }, func(ctx context.Context, c *turnCtx, in extractIn) (tools.Result, error) {
				return c.s.browserExtract(ctx, c, in)
			})),
		tools.Define(def(ToolBrowserConsole, "A tab's console messages and uncaught exceptions."),
			browserRun(ToolBrowserConsole, func(in tabIn) (string, string) { return tabSite(in.Tab) }, func(ctx context.Context, c *turnCtx, in tabIn) (tools.Result, error) {
				es, err := c.s.cfg.Browser.Console(nodeWork(c.node.ID), in.Tab)
				if err != nil {
					return tools.Result{}, err
				}
				var b strings.Builder
				for _, e := range es {
					fmt.Fprintf(&b, "[%s] %s\n", e.Level, oneLineOf(e.Text, 500))
				}
				return tools.Result{Summary: fmt.Sprintf("%d console messages.\n", len(es)) + fenceUntrusted(b.String())}, nil
			})),
		tools.Define(def(ToolBrowserNetErrors, "A tab's failed requests and 4xx/5xx answers."),
			browserRun(ToolBrowserNetErrors, func(in tabIn) (string, string) { return tabSite(in.Tab) }, func(ctx context.Context, c *turnCtx, in tabIn) (tools.Result, error) {
				es, err := c.s.cfg.Browser.NetworkErrors(nodeWork(c.node.ID), in.Tab)
				if err != nil {
					return tools.Result{}, err
				}
				var b strings.Builder
				for _, e := range es {
					fmt.Fprintf(&b, "%s %s %d %s\n", e.Method, oneLineOf(e.URL, 300), e.Status, e.Error)
				}
				return tools.Result{Summary: fmt.Sprintf("%d failed requests.\n", len(es)) + fenceUntrusted(b.String())}, nil
			})),
		browserUploadTool(def),
		tools.Define(def(ToolBrowserDownload, "Click a download link or button in a tab and keep the file in your evidence. Nothing shows by itself: node_share_file shows it."),
			browserRun(ToolBrowserDownload, func(in clickIn) (string, string) { return tabSite(in.Tab) }, func(ctx context.Context, c *turnCtx, in clickIn) (tools.Result, error) {
				dir, err := c.s.downloadsFolder(c.node)
				if err != nil {
					return tools.Result{}, err
				}
				f, err := c.s.cfg.Browser.Download(ctx, nodeWork(c.node.ID), in.Tab, in.Ref, dir)
				return fileResult(f, err)
			})),
	}, append(loginToolDefs(def), captureToolDefs(def)...)...)
}

// parkedOr is a call's answer when it waits on a card (its text), else its error.
func parkedOr(err error) (tools.Result, error) {
	var p errParked
	if errors.As(err, &p) {
		return tools.Result{Summary: p.text}, nil
	}
	return tools.Result{}, err
}

func (s *Service) browserOpen(ctx context.Context, c *turnCtx, in openIn) (tools.Result, error) {
	if err := s.decideBrowse(ctx, c, ToolBrowserOpen, in.URL); err != nil {
		return parkedOr(err)
	}
	w := nodeWork(c.node.ID)
	var p browser.Page
	var err error
	if in.Tab != "" {
		p, err = s.cfg.Browser.Navigate(ctx, w, in.Tab, in.URL)
	} else {
		p, err = s.cfg.Browser.Open(ctx, browser.OpenOptions{Work: w, Owner: browserOwner, Private: in.Private, URL: in.URL, Network: s.network(ctx),
			Width: in.Width, Height: in.Height})
	}
	if err != nil {
		return tools.Result{}, err
	}
	return s.afterPage(ctx, c, p)
}

// browserView opens the page (or takes the tab), shows a screenshot and reads the page's text.
func (s *Service) browserView(ctx context.Context, c *turnCtx, in viewIn) (tools.Result, error) {
	w := nodeWork(c.node.ID)
	tab := in.Tab
	if tab == "" {
		if in.URL == "" {
			return tools.Result{}, errors.New("Name a url to show, or one of your tabs.")
		}
		res, err := s.browserOpen(ctx, c, openIn{URL: in.URL})
		p, ok := res.Data.(browser.Page)
		if err != nil || !ok {
			return res, err
		}
		tab = p.Tab
	}
	s.cfg.Browser.Wait(ctx, w, tab, browser.WaitOptions{Load: true, Timeout: 15 * time.Second})
	shot, err := s.cfg.Browser.Screenshot(ctx, w, tab, browser.ShotOptions{})
	if err != nil {
		return tools.Result{}, err
	}
	k, err := s.keepShot(ctx, c, shot, cmpOr(in.Focus, "Screenshot of "+siteOf(shot.URL)))
	var never neverCaptured
	if err != nil && !errors.As(err, &never) {
		return tools.Result{}, err
	}
	out := pageSummary(shot.Page) + " " + k.summary()
	if never != "" {
		out = pageSummary(shot.Page) + " " + never.Error()
	}
	if !k.Held {
		// The page's text only when its picture is not held: a held shot's words are its owner's.
		if sn, err := s.cfg.Browser.Snapshot(ctx, w, tab, browser.SnapshotOptions{}); err == nil {
			s.snaps.Keep(snapKey(w, tab), sn.Text)
			out += "\n" + fenceUntrusted(sn.Text)
		}
	}
	return tools.Result{Summary: out, Data: k}, nil
}

func (s *Service) browserExtract(ctx context.Context, c *turnCtx, in extractIn) (tools.Result, error) {
	tab := in.Tab
	if tab == "" {
		if in.URL == "" {
			return tools.Result{}, errors.New("Name a tab or a url to read.")
		}
		res, err := s.browserOpen(ctx, c, openIn{URL: in.URL})
		p, ok := res.Data.(browser.Page)
		if err != nil || !ok {
			return res, err
		}
		tab = p.Tab
	}
	x, err := s.cfg.Browser.Extract(ctx, nodeWork(c.node.ID), tab)
	if err != nil {
		return tools.Result{}, err
	}
	out := pageSummary(x.Page) + fmt.Sprintf(" %d tables, %d products.\n", len(x.Tables), len(x.Products)) + fenceUntrusted(x.Markdown)
	return tools.Result{Summary: out, Data: map[string]any{"tables": x.Tables, "products": x.Products, "tab": x.Tab}}, nil
}

// downloadsFolder is where the node's downloads land: its own folder's downloads/.
func (s *Service) downloadsFolder(n Node) (string, error) {
	if s.cfg.Computer == nil {
		return "", errNoComputer
	}
	own, err := s.cfg.Computer.NodeFolder(n.Slug)
	if err != nil {
		return "", err
	}
	return own + "/downloads", nil
}

func fileResult(f browser.File, err error) (tools.Result, error) {
	if err != nil {
		return tools.Result{}, err
	}
	return tools.Result{Summary: fmt.Sprintf("Downloaded %s (%d KB, %s) to %s. Nothing shows by itself: node_share_file {path: %q} shows it to your owner.",
		f.Name, (f.Size+1023)/1024, f.Mime, f.Path, f.Path), Data: f}, nil
}

func browserUploadTool(def func(name, desc string) tools.Tool) tools.Tool {
	return tools.Define(def(ToolBrowserUpload, "Put a file from the computer into a tab's file input. Reading it is judged like any read: another folder asks your owner once; keys never go."),
		tools.Typed[uploadIn]{Run: func(ctx context.Context, tc *tools.ToolContext, in uploadIn) (tools.Result, error) {
			c, err := browserTurn(tc)
			if err != nil {
				return tools.Result{}, err
			}
			var path string
			res, err := computerDo(ctx, tc, ToolBrowserUpload, func(c *turnCtx, folder string) (computer.Call, error) {
				var err error
				if path, err = computer.Path(folder, in.Path); err != nil {
					return computer.Call{}, err
				}
				return computer.Call{Op: computer.OpRead, Folder: folder, Paths: []string{path}}, nil
			}, "", func(c *turnCtx, _ computer.Call, _ computer.Decision) (tools.Result, error) {
				pol, err := c.s.computerPolicy(ctx, c)
				if err != nil {
					return tools.Result{}, err
				}
				if why := computer.ShareProblem(path, pol); why != "" {
					return tools.Result{}, errors.New(why)
				}
				p, err := c.s.cfg.Browser.Upload(ctx, nodeWork(c.node.ID), in.Tab, in.Ref, []string{path})
				if err != nil {
					return tools.Result{}, browserError(err)
				}
				return c.s.afterPage(ctx, c, p)
			})
			c.s.noteBrowser(ctx, c.node.ID, ToolBrowserUpload, in.Tab, "", err)
			return res, err
		}})
}

func cmpOr(a, b string) string {
	if strings.TrimSpace(a) != "" {
		return a
	}
	return b
}
