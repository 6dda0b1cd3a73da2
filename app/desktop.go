package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"

	"github.com/spf13/cobra"
)

// errNoWindow: this binary was built without the desktop window.
var errNoWindow = errors.New("this build of Ensemble has no window (it was built without the desktop tag); run `ensemble serve`, or build the desktop app with `make desktop`")

func newDesktopCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "desktop",
		Short: "Open Ensemble in its own window, with the runtime inside",
		Long: `Open Ensemble in a native window. The window starts the runtime (as 'ensemble serve' does)
and shows its web UI, signed in. If a runtime already serves the data folder, the window
shows that one; if an Ensemble window is already open, it comes to the front instead.
Closing the window stops the runtime it started, as Ctrl-C stops 'ensemble serve'.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error { return runDesktop(cmd.Context(), g) },
	}
}

// desktopSession is what the window shows: a runtime it started (rt) or one already running.
type desktopSession struct {
	dir string
	rt  *Runtime // nil when the window shows a runtime started elsewhere
	// signin is a link that signs the window in; signinPage one to the sign-in page, for a browser,
	// where the person chooses whether to stay signed in.
	signin, signinPage func(ctx context.Context) (string, error)
}

func runDesktop(ctx context.Context, g *globals) error {
	if !hasWindow {
		return errNoWindow
	}
	dir, err := dataDir(g.data)
	if err != nil {
		return err
	}
	// SIGINT and SIGTERM close the window, and with it the runtime, as they stop `ensemble serve`.
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	s := &desktopSession{dir: dir}
	rt, err := startRuntime(ctx, runtimeConfig{DataDir: dir, Addr: "127.0.0.1:4000", Log: g.log})
	switch {
	case err == nil:
		s.rt = rt
		s.signin = func(context.Context) (string, error) { return rt.SigninURL(), nil }
		s.signinPage = func(context.Context) (string, error) { return rt.SigninPageURL(), nil }
	case errors.Is(err, errAlreadyRunning):
		s.signin = func(ctx context.Context) (string, error) { return remoteSignin(ctx, g) }
		s.signinPage = s.signin
	default:
		return err
	}
	err = runWindow(ctx, s)
	if s.rt != nil {
		err = errors.Join(err, s.rt.Close())
	}
	return err
}

// remoteSignin asks the runtime found through api.json for a one-time sign-in link.
func remoteSignin(ctx context.Context, g *globals) (string, error) {
	c, err := connect(ctx, g)
	if err != nil {
		return "", err
	}
	var link struct {
		URL string `json:"url"`
	}
	err = c.do(ctx, "POST", "/api/signin-links", nil, &link)
	return link.URL, err
}

// windowState is where the window was and how big, kept in the data folder between launches.
type windowState struct {
	X, Y          int
	Width, Height int
	Placed        bool // X and Y were saved
}

func windowStatePath(dir string) string { return filepath.Join(dir, "window.json") }

func loadWindowState(dir string) windowState {
	s := windowState{Width: 1280, Height: 820}
	if b, err := os.ReadFile(windowStatePath(dir)); err == nil {
		var saved windowState
		if json.Unmarshal(b, &saved) == nil && saved.Width >= 380 && saved.Height >= 400 {
			s = saved
		}
	}
	return s
}

func saveWindowState(dir string, s windowState) error {
	b, _ := json.Marshal(s)
	if err := os.WriteFile(windowStatePath(dir), b, 0o600); err != nil {
		return fmt.Errorf("save window state: %w", err)
	}
	return nil
}

// startPage is the page the window opens first: it sends the window on to a fresh one-time
// sign-in link of the runtime, so the window then shows the runtime's own UI from its loopback
// listener, as a browser would (Wails v2's asset server cannot stream the event stream).
func startPage(link string) string {
	b, _ := json.Marshal(link)
	return `<!doctype html><html><head><meta charset="utf-8"><title>Ensemble</title>` +
		`<style>body{font:15px system-ui,sans-serif;color:#555;display:grid;place-items:center;height:100vh;margin:0}</style>` +
		`</head><body><p>Opening Ensemble…</p><script>location.replace(` + string(b) + `)</script></body></html>`
}
