package browser

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"time"

	cdpbrowser "github.com/chromedp/cdproto/browser"
	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"
)

// installHint is what Status says when there is nothing to browse with.
const installHint = "Install Chromium or Google Chrome (on Debian: apt install chromium)"

// Broker is the Chromium broker. Its zero value is not usable: call New.
//
// One Chromium runs per profile (a user-data-dir belongs to one process): one per owner at
// <DataDir>/profiles/<owner>, one for private tabs (each tab its own browser context, disposed
// with it), and one clean browser per owner at <DataDir>/signin/<owner> while a sign-in uses
// it. Each starts on first use. A Chromium that exits by itself is counted as a restart; its
// held tabs open again under their ids (the next call starts it), the others are gone.
//
// Locks: b.mu before a tab's mu, never the other way; a tab's act lock (one action at a time)
// is taken before either.
type Broker struct {
	cfg Config
	log *slog.Logger

	root   context.Context // ends at Close; every Chromium's allocator lives under it
	cancel context.CancelFunc

	mu       sync.Mutex
	procs    map[string]*proc // by profile key: "owner:<id>", "private", "clean:<id>"
	tabs     map[string]*tab
	next     int
	restarts int
	closed   bool
	clean    map[string]*cleanBrowser // by the held tab's id
	ver      string
}

// New makes a broker; Chromium starts on first use.
func New(cfg Config) *Broker {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.DataDir == "" {
		cfg.DataDir = filepath.Join(os.TempDir(), "ensemble-browser")
	}
	root, cancel := context.WithCancel(context.Background())
	b := &Broker{
		cfg: cfg, log: cfg.Logger.With("component", "browser"),
		root: root, cancel: cancel,
		procs: map[string]*proc{}, tabs: map[string]*tab{}, clean: map[string]*cleanBrowser{},
	}
	go b.janitor()
	return b
}

// Close ends every tab and every Chromium the broker started.
func (b *Broker) Close() {
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return
	}
	b.closed = true
	procs := make([]*proc, 0, len(b.procs))
	for _, p := range b.procs {
		procs = append(procs, p)
	}
	b.procs = map[string]*proc{}
	b.tabs = map[string]*tab{}
	b.mu.Unlock()
	b.cancel()
	for _, p := range procs {
		p.stop()
	}
}

// proc is one Chromium process with one user-data-dir.
type proc struct {
	key      string
	dir      string
	headless bool
	ctx      context.Context // the browser's first target; children of it are tabs
	cancel   context.CancelFunc
	ua       string // the browser's own user agent, HeadlessChrome made Chrome
	product  string
	lost     chan struct{} // closed when the connection to Chromium drops
	stopping chan struct{} // closed when the broker stops it on purpose
	stopOnce sync.Once
}

func (p *proc) stop() {
	p.stopOnce.Do(func() { close(p.stopping) })
	p.cancel()
}

// alive reports whether Chromium still answers.
func (p *proc) alive() bool {
	select {
	case <-p.lost:
		return false
	default:
		return true
	}
}

// chromiumPath finds the program: cfg.Chromium, else PATH, else the usual macOS places.
func (b *Broker) chromiumPath() (string, error) {
	if b.cfg.Chromium != "" {
		if _, err := os.Stat(b.cfg.Chromium); err != nil {
			return "", fmt.Errorf("%w: %s", ErrNoChromium, b.cfg.Chromium)
		}
		return b.cfg.Chromium, nil
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable", "chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p, nil
		}
	}
	if runtime.GOOS == "darwin" {
		for _, p := range []string{
			"/Applications/Google Chrome.app/Contents/MacOS/Google Chrome",
			"/Applications/Chromium.app/Contents/MacOS/Chromium",
		} {
			if _, err := os.Stat(p); err == nil {
				return p, nil
			}
		}
	}
	return "", ErrNoChromium
}

// hasDisplay reports whether a window can be shown on this computer's screen.
func hasDisplay() bool {
	if runtime.GOOS != "linux" {
		return true
	}
	return os.Getenv("DISPLAY") != "" || os.Getenv("WAYLAND_DISPLAY") != ""
}

// sanitize makes an owner id safe as a folder name.
func sanitize(s string) string {
	if s == "" {
		return "default"
	}
	var sb strings.Builder
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_', r == '.':
			sb.WriteRune(r)
		default:
			sb.WriteByte('_')
		}
	}
	out := sb.String()
	if strings.Trim(out, ".") == "" {
		return "default"
	}
	return out
}

// procFor returns the running Chromium for key, starting it when it is not running.
func (b *Broker) procFor(ctx context.Context, key, dir string, visible bool) (*proc, error) {
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return nil, errors.New("the browser broker is closed")
	}
	if p := b.procs[key]; p != nil && p.alive() {
		b.mu.Unlock()
		return p, nil
	}
	b.mu.Unlock()
	p, err := b.startProc(ctx, key, dir, visible)
	if err != nil {
		return nil, err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if old := b.procs[key]; old != nil && old.alive() {
		// Another call started it meanwhile: keep theirs.
		go p.stop()
		return old, nil
	}
	b.procs[key] = p
	return p, nil
}

// flags are Chromium's switches: those of an ordinary Chrome, without the automation ones.
func (b *Broker) flags(path, dir string, headless bool) []chromedp.ExecAllocatorOption {
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(path),
		chromedp.UserDataDir(dir),
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-blink-features", "AutomationControlled"),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-background-timer-throttling", true),
		chromedp.Flag("disable-backgrounding-occluded-windows", true),
		chromedp.Flag("disable-renderer-backgrounding", true),
		chromedp.Flag("disable-breakpad", true),
		chromedp.Flag("disable-client-side-phishing-detection", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-default-apps", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-features", "Translate,OptimizationHints,MediaRouter"),
		chromedp.Flag("disable-popup-blocking", true),
		chromedp.Flag("password-store", "basic"),
		chromedp.Flag("use-mock-keychain", true),
		chromedp.Flag("lang", language()),
		chromedp.WindowSize(1280, 900),
	}
	if headless {
		opts = append(opts, chromedp.Flag("headless", "new"), chromedp.Flag("hide-scrollbars", true), chromedp.Flag("mute-audio", true))
	}
	return opts
}

func (b *Broker) startProc(ctx context.Context, key, dir string, visible bool) (*proc, error) {
	path, err := b.chromiumPath()
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("making the profile folder: %w", err)
	}
	// A Chromium killed mid-run leaves its lock; it would refuse the profile.
	for _, f := range []string{"SingletonLock", "SingletonSocket", "SingletonCookie"} {
		os.Remove(filepath.Join(dir, f))
	}
	headless := !visible
	actx, acancel := chromedp.NewExecAllocator(b.root, b.flags(path, dir, headless)...)
	bctx, bcancel := chromedp.NewContext(actx, chromedp.WithLogf(func(string, ...any) {}), chromedp.WithErrorf(func(string, ...any) {}))
	cancel := func() { bcancel(); acancel() }
	startCtx, scancel := context.WithTimeout(ctx, 30*time.Second)
	defer scancel()
	// Start the browser under a context that outlives this call: only its first use waits on startCtx.
	done := make(chan error, 1)
	go func() { done <- chromedp.Do(bctx) }()
	select {
	case err = <-done:
	case <-startCtx.Done():
		err = startCtx.Err()
	}
	if err != nil {
		cancel()
		return nil, fmt.Errorf("starting Chromium: %w", err)
	}
	c := chromedp.FromContext(bctx)
	p := &proc{key: key, dir: dir, headless: headless, ctx: bctx, cancel: cancel, lost: c.Browser.LostConnection, stopping: make(chan struct{})}
	v, err := chromedp.CallBrowser(bctx, cdpbrowser.GetVersion, cdp.Empty{})
	if err == nil {
		p.ua = strings.ReplaceAll(v.UserAgent, "HeadlessChrome", "Chrome")
		p.product = strings.ReplaceAll(v.Product, "HeadlessChrome", "Chrome")
	}
	if _, err := chromedp.CallBrowser(bctx, target.SetDiscoverTargets, target.SetDiscoverTargetsParams{Discover: true}); err != nil {
		cancel()
		return nil, fmt.Errorf("watching Chromium's windows: %w", err)
	}
	go b.watchPopups(p)
	go b.watchProc(p)
	b.log.Info("chromium started", "profile", key, "headless", headless)
	return p, nil
}

// watchProc notices a Chromium that died by itself, and brings its held tabs back.
func (b *Broker) watchProc(p *proc) {
	select {
	case <-p.stopping:
		return
	case <-b.root.Done():
		return
	case <-p.lost:
	}
	b.mu.Lock()
	if b.procs[p.key] == p {
		delete(b.procs, p.key)
	}
	b.restarts++
	var held []*tab
	for id, t := range b.tabs {
		if t.proc != p {
			continue
		}
		if t.isHeld() {
			held = append(held, t)
			continue
		}
		delete(b.tabs, id)
	}
	b.mu.Unlock()
	p.cancel()
	b.log.Warn("chromium exited", "profile", p.key, "heldTabs", len(held))
	for _, t := range held {
		go b.reopen(t, t.context())
	}
}

// Status says what this computer can browse with.
func (b *Broker) Status(ctx context.Context) Status {
	var s Status
	s.Display = hasDisplay() && !b.cfg.Headless
	path, err := b.chromiumPath()
	if err != nil {
		s.Problem = installHint
		return s
	}
	s.Chromium = path
	b.mu.Lock()
	for _, p := range b.procs {
		if p.alive() {
			s.Running = true
			if s.Version == "" {
				s.Version = p.product
			}
		}
	}
	s.Tabs = len(b.tabs)
	s.Restarts = b.restarts
	b.mu.Unlock()
	if s.Version == "" {
		s.Version = b.version(ctx, path)
	}
	return s
}

// version asks the program itself, once.
func (b *Broker) version(ctx context.Context, path string) string {
	b.mu.Lock()
	v := b.ver
	b.mu.Unlock()
	if v != "" {
		return v
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, path, "--version").Output()
	if err != nil {
		return ""
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	v = strings.TrimSpace(lines[len(lines)-1])
	b.mu.Lock()
	b.ver = v
	b.mu.Unlock()
	return v
}
