package node

import (
	"context"
	"path/filepath"

	"github.com/ensemblework/ensemble/runtime/judge"
	"github.com/ensemblework/ensemble/runtime/terminal"
)

// AdoptTerminals takes back the terminals the nodes had open when the last runtime stopped, as
// [terminal.Manager.Reattach] found them still running in their hosts, each for the node it was
// opened for and under the same limits: the idle time starts again, the age counts from when it
// was opened. One whose node is gone, that was a screenshot's, or that is over its node's
// TerminalsPerNode is closed.
//
// What the judge knew of the line being typed is not kept across, so it takes the line as
// unknown: the next send clears it first.
func (s *Service) AdoptTerminals(ctx context.Context, list []*terminal.Session) {
	nodes := make([]Node, len(list)) // read before the lock: a send waits on it
	for i, sess := range list {
		if sess.Node() != "" {
			nodes[i], _ = s.Node(ctx, sess.Node())
		}
	}
	var drop []*terminal.Session
	s.terms.mu.Lock()
	open := map[string]int{}
	for _, t := range s.terms.byID {
		open[t.nodeID]++
	}
	for i, sess := range list {
		n := nodes[i]
		if n.ID == "" || n.ID != sess.Node() || n.ParentID != "" || open[n.ID] >= TerminalsPerNode {
			drop = append(drop, sess)
			continue
		}
		open[n.ID]++
		title := "shell in " + filepath.Base(sess.Info().Folder)
		s.keepTermLocked(n.ID, n.Slug, title, sess, judge.TermState{Unknown: true})
		s.log.Info("node terminal taken back", "node", n.Slug, "session", sess.ID())
	}
	s.terms.mu.Unlock()
	for _, sess := range drop {
		s.log.Info("node terminal closed after a restart", "node", sess.Node(), "session", sess.ID())
		go sess.Close()
	}
}
