package node

import (
	"context"

	"github.com/ensemblework/ensemble/browser"
)

// Browser is the Chromium broker as nodes and runs use it (*browser.Broker; spec 002 §8.16). The
// runtime decides who may do what (the decision order, cards, the run's mode); the broker keeps a
// tab to the work that opened it, to the addresses it may load, and untouched while it is
// sensitive.
type Browser interface {
	browser.Driver
	browser.Files

	// Hold makes a tab sensitive for its owner's sign-in or human check (purpose): nothing reads,
	// captures or drives it, no lease closes it (HoldLimit at most), and when it or Chromium
	// closes it opens again under its id. The broker watches it every two seconds (and the clean
	// browser, when open) and calls Config.OnSignIn once it is seen done.
	Hold(ctx context.Context, w browser.Work, tab, purpose string, check browser.SignedInCheck) error
	// Release gives a held tab back to its work; clear leaves it at about:blank (Not now).
	Release(ctx context.Context, w browser.Work, tab string, clear bool) error
	// CheckSignIn checks a held tab now (I'm done, "done" in the chat).
	CheckSignIn(ctx context.Context, w browser.Work, tab string) (bool, error)
	// OpenClean opens the clean, real-input browser at a held tab's page: a window on this
	// computer's screen, or headless for a takeover. While it is open, Screencast and Input on
	// the tab reach the clean browser's page; seen done, its session moves into the tab.
	OpenClean(ctx context.Context, w browser.Work, tab string) (visible bool, err error)
	CloseClean(ctx context.Context, w browser.Work, tab string) error

	// Screencast sends the tab's frames to each until stop or ctx ends. The caller (a live view
	// or a takeover) is the only reader of a sensitive tab's frames, and they go out end to end.
	Screencast(ctx context.Context, w browser.Work, tab string, o browser.ScreencastOptions, each func(browser.Frame)) (stop func(), err error)
	// Input applies one takeover input as real input.
	Input(ctx context.Context, w browser.Work, tab string, in browser.Input) error
}
