package node

import (
	"context"
	"fmt"

	"github.com/ensemblework/ensemble/browser"
	"github.com/ensemblework/ensemble/runtime/computer"
)

// Consequential clicks (spec 002 §8.16): a click on an element whose name buys, pays, sends,
// deletes or publishes goes through the decision order as computer.OpAct, asked on a computer
// card unless the owner's own words in the turn asked for it ("order the kettle" covers Place
// order). The element's name comes from the last snapshot the node read of the tab, which is
// where its references came from.

func snapKey(w browser.Work, tab string) string { return string(w) + "\x00" + tab }

// judgeClick decides a node's click on ref in tab: nil when it may go ahead, else why not, or
// errParked while its card waits for the owner.
func (s *Service) judgeClick(ctx context.Context, c *turnCtx, tab, ref string) error {
	w := nodeWork(c.node.ID)
	name := s.snaps.Name(snapKey(w, tab), ref)
	word := browser.Consequential(name)
	if word == "" {
		return nil
	}
	said, err := s.ownerSaid(ctx, c)
	if err != nil {
		return err
	}
	if browser.AskedFor(said, word) {
		return nil
	}
	page := ""
	if ti, ok := s.tabInfo(w, tab); ok {
		page = ti.URL
	}
	if s.cfg.Computer == nil {
		return fmt.Errorf("Clicking %q would %s for your owner, which they have not asked for: ask them first.", name, word)
	}
	folder, err := s.cfg.Computer.NodeFolder(c.node.Slug)
	if err != nil {
		return err
	}
	return s.decideCall(ctx, c, ToolBrowserClick, computer.Call{Op: computer.OpAct, Folder: folder, URL: page, Command: name},
		"Your owner's answer did not cover this click; ask again only if it is still needed.")
}
