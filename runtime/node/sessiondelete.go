package node

import (
	"context"
	"fmt"
	"time"

	"github.com/ensemblework/ensemble/runtime/ledger"
	"github.com/ensemblework/ensemble/runtime/sessions"
	"github.com/ensemblework/ensemble/runtime/tools"
)

// ToolSessionDelete deletes one of the node's sessions in Ensemble. It always asks the owner on
// a card, whatever the node's autonomy (spec 002 §8.3): a deleted session is never reopened.
const ToolSessionDelete = "node_session_delete"

// stopWait is how long a delete waits for a stopped run to end before the session can go.
const stopWait = 20 * time.Second

func sessionDeleteTool(def func(name, desc string) tools.Tool) tools.Tool {
	return tools.Define(def(ToolSessionDelete, "Ask your owner, on a card, to delete one of your agent sessions: its run going on is stopped, "+
		"its queue dropped, and it is never continued again; its runs, folders and files stay. Always asks."),
		tools.Typed[sessionRefIn]{Run: func(ctx context.Context, tc *tools.ToolContext, in sessionRefIn) (tools.Result, error) {
			c, root, err := turnSession(ctx, tc, in.Session)
			if err != nil {
				return tools.Result{}, err
			}
			title := root
			if info, err := c.s.sessionInfo(ctx, c.s.cfg.Store.Reader(), root); err == nil {
				title = fmt.Sprintf("%s (%s in %s)", root, agentName(info.Agent), tools.HomeShort(info.Folder))
			}
			body := fmt.Sprintf("%s asks to delete the agent session %s: what runs is stopped, its queue dropped, and it is never continued; its runs and files stay.",
				c.node.Name, title)
			return c.s.cardAndWait(ctx, c, body, Card{Type: "session", RoomID: turnOrigin(c).roomID,
				Session: &SessionCall{Delete: &DeleteCall{Session: root}}})
		}})
}

// DeleteCall is a held node_session_delete.
type DeleteCall struct {
	Session string `json:"session"`
}

// deleteSession stops what runs and is queued in a node's session, then deletes the session in
// Ensemble, as actor.
func (s *Service) deleteSession(ctx context.Context, o origin, root string, actor ledger.Actor) error {
	if s.cfg.Jobs == nil || s.cfg.Sessions == nil {
		return errNoJobs
	}
	if _, _, err := s.stopSession(ctx, o, root, false); err != nil {
		return err
	}
	if err := s.awaitIdle(ctx, root); err != nil {
		return err
	}
	if _, err := s.cfg.Sessions.Delete(ctx, root, actor); err != nil {
		return err
	}
	err := s.cfg.Writer.Exec(ctx, func(tx *ledger.Tx) error {
		return sessionEventTx(tx, root, o.node.ID, "delete", o, "", "")
	})
	s.refreshSession(ctx, root)
	return err
}

// awaitIdle waits for a stopped run of the session to end: an agent gets a moment to exit.
func (s *Service) awaitIdle(ctx context.Context, root string) error {
	ctx, cancel := context.WithTimeout(ctx, stopWait)
	defer cancel()
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	for {
		d, err := s.cfg.Sessions.Get(ctx, root)
		if err != nil {
			return err
		}
		if d.Status == sessions.Idle {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("The session's run did not stop within %s; try deleting it again in a moment.", stopWait)
		case <-tick.C:
		}
	}
}

// DeleteAgentSession is the owner deleting a node's session from its card (DELETE
// /api/node/sessions/{id}): it acts at once, as the person.
func (s *Service) DeleteAgentSession(ctx context.Context, id string) error {
	root, o, err := s.ownerOrigin(ctx, id)
	if err != nil {
		return err
	}
	return s.deleteSession(ctx, o, root, ledger.Actor{Kind: ledger.Person})
}
