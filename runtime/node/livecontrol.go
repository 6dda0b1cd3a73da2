package node

import (
	"context"
	"sync"

	"github.com/ensemblework/ensemble/runtime/problem"
)

// liveControl is what live cards and takeovers share of one terminal or browser tab: its open
// live card, and which takeover has control while the owner has it. The node's tools on it wait
// (waitBack) until the owner hands it back.
type liveControl struct {
	busy string // what a second view asking for control hears

	cmu        sync.Mutex    // guards the following fields
	live       string        // the open live card's message id
	controller string        // the takeover in control
	handBack   chan struct{} // while the owner controls: closed when they hand it back
}

func (c *liveControl) liveCard() string {
	c.cmu.Lock()
	defer c.cmu.Unlock()
	return c.live
}

func (c *liveControl) setLiveCard(id string) {
	c.cmu.Lock()
	c.live = id
	c.cmu.Unlock()
}

// takeControl gives the owner control through takeover id; another view in control keeps it.
func (c *liveControl) takeControl(id string) error {
	c.cmu.Lock()
	defer c.cmu.Unlock()
	switch c.controller {
	case id:
		return nil
	case "":
		c.controller, c.handBack = id, make(chan struct{})
		return nil
	}
	return problem.Conflict("%s", c.busy)
}

// handBackFrom gives control back to the node, if takeover id has it.
func (c *liveControl) handBackFrom(id string) {
	c.cmu.Lock()
	defer c.cmu.Unlock()
	if c.controller == id {
		close(c.handBack)
		c.controller, c.handBack = "", nil
	}
}

// controlled is a channel closed when the owner hands control back; nil when the node has it.
func (c *liveControl) controlled() <-chan struct{} {
	c.cmu.Lock()
	defer c.cmu.Unlock()
	return c.handBack
}

// waitBack waits while the owner has control, and says whether it did; ended is the answer when
// ctx ends first.
func (c *liveControl) waitBack(ctx context.Context, ended error) (bool, error) {
	back := c.controlled()
	waited := back != nil
	for back != nil {
		select {
		case <-back:
		case <-ctx.Done():
			return true, ended
		}
		back = c.controlled() // another view may have taken it since
	}
	return waited, nil
}
