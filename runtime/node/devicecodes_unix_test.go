//go:build !windows

package node

import (
	"context"
	"testing"
)

// A page a command in the node's terminal opens reaches OpenCLISignIn too, for the node's chat
// with its owner.
func TestTerminalOpensPage(t *testing.T) {
	f, n, _ := termFixture(t)
	opened := make(chan CLISignIn, 4)
	f.svc.cfg.OpenCLISignIn = func(_ context.Context, in CLISignIn) error { opened <- in; return nil }
	ctx := context.Background()
	open, err := f.svc.terminalOpen(ctx, n)
	if err != nil {
		t.Fatal(err)
	}
	_, err = f.svc.terminalSend(ctx, n, terminalSendIn{Session: open.Session, Text: "\"$BROWSER\" 'https://example.com/login?x=1'; echo opened-$?\n"})
	if err != nil {
		t.Fatal(err)
	}
	var got CLISignIn
	f.waitFor("the page", func() bool {
		select {
		case got = <-opened:
			return true
		default:
			return false
		}
	})
	if got.URL != "https://example.com/login?x=1" || got.NodeID != n.ID || got.RoomID != n.DMRoomID || !got.Private {
		t.Fatalf("opened %+v", got)
	}
}
