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
	browser.Holds

	// Screencast sends the tab's frames to each until stop or ctx ends. The caller (a live view
	// or a takeover) is the only reader of a sensitive tab's frames, and they go out end to end.
	Screencast(ctx context.Context, w browser.Work, tab string, o browser.ScreencastOptions, each func(browser.Frame)) (stop func(), err error)
	// Input applies one takeover input as real input.
	Input(ctx context.Context, w browser.Work, tab string, in browser.Input) error
}
