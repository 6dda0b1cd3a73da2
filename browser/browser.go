// Package browser is the Chromium broker (spec 002 §8.16): one Chromium driven with chromedp,
// started on first use and restarted when it dies, with one persistent profile per owner plus
// private tabs, tabs leased to one work at a time, snapshots with references, actions, captures,
// sign-in detection with held tabs, a clean real-input browser for signing in, and screencasts
// for live views and takeovers.
//
// The broker knows nothing of nodes, runs, cards or the judge: the runtime reaches it through a
// small interface (runtime/node.Browser) and decides there who may do what. The broker enforces
// only what no caller may change: the address policy a tab was opened with, a lease's owner, and
// that a sensitive tab is never read, captured or driven.
package browser

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/ensemblework/ensemble/browser/extract"
)

// Driver is what a caller needs of the broker to open, read and drive its own tabs (*Broker
// has it; runtime/node.Browser adds files, holds, sign-ins and screencasts).
type Driver interface {
	Status(ctx context.Context) Status
	Open(ctx context.Context, o OpenOptions) (Page, error)
	Navigate(ctx context.Context, w Work, tab, url string) (Page, error)
	Tabs(w Work) []TabInfo
	CloseTab(ctx context.Context, w Work, tab string) error
	// CloseWork closes every tab of w, held ones too (a run ended, a node was deleted).
	CloseWork(ctx context.Context, w Work) error

	Snapshot(ctx context.Context, w Work, tab string, o SnapshotOptions) (Snapshot, error)
	Click(ctx context.Context, w Work, tab, ref string) (Page, error)
	Type(ctx context.Context, w Work, tab, ref, text string, submit bool) (Page, error)
	Press(ctx context.Context, w Work, tab, key string) (Page, error)
	Wait(ctx context.Context, w Work, tab string, o WaitOptions) (Page, error)
	Screenshot(ctx context.Context, w Work, tab string, o ShotOptions) (Shot, error)
	Extract(ctx context.Context, w Work, tab string) (Extraction, error)
	Console(w Work, tab string) ([]ConsoleEntry, error)
	NetworkErrors(w Work, tab string) ([]NetError, error)
}

// Files is what a tab moves to and from the computer: a file into a file input, a download, a
// fetch with the profile's sign-ins.
type Files interface {
	Upload(ctx context.Context, w Work, tab, ref string, paths []string) (Page, error)
	// Download clicks ref and waits for the file it downloads into dir.
	Download(ctx context.Context, w Work, tab, ref, dir string) (File, error)
	// Fetch downloads url into dir with the sign-ins of w's profile (tab's, when given).
	Fetch(ctx context.Context, w Work, tab, url, dir string) (File, error)
}

// Holds is how a tab waits for its owner's sign-in or human check (spec 002 §8.16.1).
type Holds interface {
	// Hold makes a tab sensitive for its owner's sign-in or human check (purpose): nothing reads,
	// captures or drives it, no lease closes it (HoldLimit at most), and when it or Chromium
	// closes it opens again under its id. The broker watches it every two seconds (and the clean
	// browser, when open) and calls Config.OnSignIn once it is seen done.
	Hold(ctx context.Context, w Work, tab, purpose string, check SignedInCheck) error
	// Release gives a held tab back to its work; clear leaves it at about:blank (Not now).
	Release(ctx context.Context, w Work, tab string, clear bool) error
	// CheckSignIn checks a held tab now (I'm done, "done" in the chat).
	CheckSignIn(ctx context.Context, w Work, tab string) (bool, error)
	// OpenClean opens the clean, real-input browser at a held tab's page: a window on this
	// computer's screen, or headless for a takeover. While it is open, Screencast and Input on
	// the tab reach the clean browser's page; seen done, its session moves into the tab.
	OpenClean(ctx context.Context, w Work, tab string) (visible bool, err error)
	CloseClean(ctx context.Context, w Work, tab string) error
}

var (
	_ Holds  = (*Broker)(nil)
	_ Driver = (*Broker)(nil)
	_ Files  = (*Broker)(nil)
)

// Work names who holds a tab: "node:<nodeId>:own" for a node's own browsing, "run:<jobId>" for a
// run's. Only the work that opened a tab (or its popup's opener) may use it.
type Work string

// Lease lengths (spec 002 §8.16): each use renews a tab's lease; a lapsed tab is closed.
const (
	TabLease = 10 * time.Minute
	AppLease = 30 * time.Minute
	// HoldLimit is how long a tab waiting for its owner's sign-in is kept without use.
	HoldLimit = 2 * time.Hour
)

// Network is where a tab may go.
type Network int

const (
	// Anywhere: the public web and this computer's own addresses (other private networks are
	// the caller's decision, made before Open or passed as Allow).
	Anywhere Network = iota
	// LocalOnly: the internet is off; only this computer's own addresses load, subresources and
	// redirects included.
	LocalOnly
)

// OpenOptions opens a tab.
type OpenOptions struct {
	Work    Work
	Owner   string // whose persistent profile: the owner's id; ignored for Private
	Private bool   // a clean context of its own, forgotten when the tab closes
	URL     string // http(s) or about:blank
	Network Network
	Width   int // viewport; 1280×800 by default
	Height  int
	Lease   time.Duration // TabLease by default
	// Tab reopens a tab under this id (a held sign-in's tab after the runtime restarted).
	Tab string
}

// TabInfo is one tab as browser_tabs lists it.
type TabInfo struct {
	ID        string    `json:"tab"` // t1, t2, …: stable for the broker's life, kept across a restart of Chromium
	Work      Work      `json:"-"`
	URL       string    `json:"url"`
	Title     string    `json:"title"`
	Private   bool      `json:"private,omitempty"`
	Popup     bool      `json:"popup,omitempty"`
	OpenedBy  string    `json:"openedBy,omitempty"`  // the tab whose page opened this one
	Sensitive string    `json:"sensitive,omitempty"` // why no one may read or drive it: sign_in, human_check, takeover
	Held      bool      `json:"held,omitempty"`      // kept open for its owner, whatever its lease
	LeaseEnds time.Time `json:"leaseEnds"`
}

// Page is what an action left the tab showing.
type Page struct {
	Tab    string    `json:"tab"`
	URL    string    `json:"url"`
	Title  string    `json:"title"`
	Status int       `json:"status,omitempty"` // the main document's HTTP status, when known
	Popups []TabInfo `json:"popups,omitempty"` // windows this action opened, each a tab of its own
	SignIn *SignIn   `json:"signIn,omitempty"` // the page asks for a sign-in or a human check
	Note   string    `json:"note,omitempty"`
}

// SignIn is what the broker's heuristics saw on a page (spec 002 §8.16.1).
type SignIn struct {
	Purpose string `json:"purpose"` // sign_in, human_check
	Origin  string `json:"origin"`  // https://portal.azure.com
	Why     string `json:"why"`     // "a password field", "a sign-in address", "401", "accounts.google.com"
	// Hint only: the page is this computer's own or a private tab's, where a sign-in is the
	// work's to do (testing an app), so the tab is not made sensitive.
	HintOnly bool `json:"hintOnly,omitempty"`
}

// SnapshotOptions bounds a snapshot.
type SnapshotOptions struct {
	Interactive bool // only what can be acted on, with the headings around it
	MaxChars    int  // 8,000 by default
}

// Snapshot is a page as an accessibility tree, one node a line, with references ("e12") for the
// actions. Text is the page's own and untrusted: Fenced wraps it for a model.
type Snapshot struct {
	Page
	Text      string `json:"text"`
	Refs      int    `json:"refs"`
	Truncated bool   `json:"truncated,omitempty"`
}

// ShotOptions takes a screenshot.
type ShotOptions struct {
	Width, Height int    // the viewport for this shot; the tab's by default
	FullPage      bool   //
	Ref           string // only this element
	Quality       int    // 0 or 100: PNG; otherwise JPEG at this quality

	scale float64 // a glance's: the viewport scaled down, (0, 1)
}

// Shot is a screenshot with what was on screen, so the caller can hold it when it shows a kept
// secret (the caller knows the secrets; the broker does not).
type Shot struct {
	Page
	Image  []byte `json:"-"`
	Mime   string `json:"mime"`
	Width  int    `json:"width"`
	Height int    `json:"height"`
	Text   string `json:"-"`                // the visible text and the values of fields, for the caller's checks
	Masked int    `json:"masked,omitempty"` // password fields blanked before the shot
}

// Extraction is a page as Markdown, its tables, and the products and prices on it.
type Extraction struct {
	Page
	Markdown string            `json:"markdown"`
	Tables   []extract.Table   `json:"tables,omitempty"`
	Products []extract.Product `json:"products,omitempty"`
}

// ConsoleEntry is one console message or uncaught exception.
type ConsoleEntry struct {
	At    time.Time `json:"at"`
	Level string    `json:"level"` // log, info, warning, error, exception
	Text  string    `json:"text"`
	URL   string    `json:"url,omitempty"`
}

// NetError is a request that failed or answered 4xx/5xx.
type NetError struct {
	At     time.Time `json:"at"`
	URL    string    `json:"url"`
	Method string    `json:"method"`
	Status int       `json:"status,omitempty"`
	Error  string    `json:"error,omitempty"`
	Type   string    `json:"type,omitempty"` // Document, Script, XHR, …
}

// File is a file the browser wrote: a download or a fetch.
type File struct {
	Path string `json:"path"`
	Name string `json:"name"`
	Mime string `json:"mime"`
	Size int64  `json:"size"`
	URL  string `json:"url"`
}

// WaitOptions waits for one thing, at most Timeout (30 s by default, 2 minutes at most).
type WaitOptions struct {
	Text    string // this text on the page
	Gone    string // this text no longer on the page
	Ref     string // this element visible
	URL     string // the address to contain this
	Load    bool   // the page to finish loading
	Timeout time.Duration
}

// Frame is one screencast frame: a JPEG of the page shown.
type Frame struct {
	JPEG   []byte
	Width  int
	Height int
	URL    string // without its query
	Title  string
	Popup  bool
}

// ScreencastOptions: watching is 1024 px at quality 45, control 1280 at 55 (spec 002 §8.16.2).
type ScreencastOptions struct {
	MaxWidth int
	Quality  int
}

// Input is one input event of a takeover: a tap or click at a fraction of the page, a wheel, a
// key as a keyboard sends it, or text typed.
type Input struct {
	Kind string  `json:"kind"`        // tap, down, up, move, wheel, key, text
	X    float64 `json:"x,omitempty"` // 0..1 of the page's width and height
	Y    float64 `json:"y,omitempty"`
	DX   float64 `json:"dx,omitempty"`
	DY   float64 `json:"dy,omitempty"`
	Key  string  `json:"key,omitempty"` // Enter, Tab, Backspace, ArrowDown, a, …
	Text string  `json:"text,omitempty"`
}

// Errors the broker returns; the runtime turns them into the sentence a model or person reads.
var (
	ErrNoTab      = errors.New("no such tab")
	ErrNotYours   = errors.New("the tab belongs to other work")
	ErrSensitive  = errors.New("the tab waits for its owner")
	ErrNoRef      = errors.New("no element with that reference: take a new snapshot")
	ErrRefused    = errors.New("the address is not one this tab may open")
	ErrNoChromium = errors.New("no Chromium or Chrome on this computer")
)

// Status is what this computer can browse and capture with (capture_status).
type Status struct {
	Chromium string `json:"chromium,omitempty"` // the program's path
	Version  string `json:"version,omitempty"`
	Running  bool   `json:"running"`
	Display  bool   `json:"display"` // a screen for the clean browser's window
	Tabs     int    `json:"tabs"`
	Restarts int    `json:"restarts,omitempty"`
	Problem  string `json:"problem,omitempty"` // why it cannot browse, and what to install
}

// SignedInCheck says how to tell a sign-in worked; by default the tab is on the site with no
// password or code field left, and the site's cookies changed.
type SignedInCheck struct {
	URLPattern string `json:"urlPattern,omitempty"`
	Selector   string `json:"selector,omitempty"`
}

// Config is a broker's setup.
type Config struct {
	Chromium string // the program; found on PATH (chromium, google-chrome, chrome) when empty
	DataDir  string // profiles live in <DataDir>/profiles/<owner>, the clean browser's in <DataDir>/signin/<owner>
	// Refuse is asked for every address a tab's page or request would load, after the tab's
	// Network: it returns why an address may not load (Ensemble's own UI and relay), or "".
	Refuse func(u string) string
	// OnSignIn hears a held tab's sign-in seen done (how: "tab" or "clean") or given up.
	OnSignIn func(work Work, tab string, ok bool, how string)
	Headless bool // true on a computer without a screen; the clean browser then shows through a screencast
	Logger   *slog.Logger
	Now      func() time.Time
}
