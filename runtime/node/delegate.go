package node

import (
	"context"
	"fmt"
	"strings"

	"github.com/ensemblework/ensemble/runtime/assistant"
	"github.com/ensemblework/ensemble/runtime/ledger"
	"github.com/ensemblework/ensemble/runtime/tools"
)

// ReasonDelegate is a step another node handed over; ReasonReport the turn that hears its result.
const (
	ReasonDelegate = "delegate"
	ReasonReport   = "report"
)

// delegate hands a step to a member of the crew as a work turn (spec 002 §6.1, without plans):
// the member does it in its own work lane and conversation, posts nothing, and its result wakes
// the delegating node in the lane it asked from.
func (s *Service) delegate(ctx context.Context, c *turnCtx, in delegateIn) (tools.Result, error) {
	if c.room.Kind != RoomCrew {
		return tools.Result{}, fmt.Errorf("node_delegate hands work to a crew's members; this is not a crew. Mention the node in a crew, or ask your owner to add it with node_crew_add.")
	}
	to, err := s.Node(ctx, in.To)
	if err != nil {
		return tools.Result{}, err
	}
	member := false
	for _, m := range c.room.Members {
		member = member || m.NodeID == to.ID
	}
	switch {
	case to.ID == c.node.ID:
		return tools.Result{}, fmt.Errorf("That is you: do this part yourself.")
	case !member:
		return tools.Result{}, fmt.Errorf("@%s is not in %s. Delegate to a member, or ask your owner to add it with node_crew_add.", to.Slug, c.room.Title)
	case to.Paused():
		return tools.Result{}, fmt.Errorf("@%s is paused; your owner resumes it by writing to it.", to.Slug)
	}
	t := c.rt.turn
	id := ledger.NewID("dlg_")
	title := in.Brief
	if len(title) > 60 {
		title = strings.TrimSpace(title[:60]) + "…"
	}
	err = s.cfg.Writer.Exec(ctx, func(tx *ledger.Tx) error {
		return s.enqueueTx(tx, Turn{NodeID: to.ID, RoomID: c.room.ID, Lane: "work:" + id + ":" + to.ID, Reason: ReasonDelegate,
			ByOwner: t.ByOwner, Depth: t.Depth + 1, OperationID: "delegate:" + id, ConversationID: ledger.NewID("cnv_"),
			Note:     fmt.Sprintf("@%s, who leads “%s”, hands you this step of your owner's request:\n%s", c.node.Slug, c.room.Title, in.Brief),
			ReportTo: &Report{NodeID: c.node.ID, RoomID: c.room.ID, Lane: t.Lane, Private: t.Private, ByOwner: t.ByOwner, Depth: t.Depth, Title: title}})
	})
	if err != nil {
		return tools.Result{}, err
	}
	s.wake()
	return tools.Result{Summary: fmt.Sprintf("Handed to @%s: %s", to.Slug, title),
		Data: map[string]string{"delegation": id, "to": to.Slug, "note": "You will hear its result in a later turn; do not wait for it or announce it."}}, nil
}

// reportTx ends a work turn: its result wakes the node that delegated it, in its lane.
func (s *Service) reportTx(tx *ledger.Tx, t Turn, n Node, text string, rows []assistant.ToolRow) error {
	if err := s.stepTurnEndedTx(tx, t); err != nil {
		return err
	}
	if t.ReportTo == nil {
		return nil
	}
	if text == "" {
		text = "(it gave no answer)"
	}
	if strings.HasPrefix(t.OperationID, "helper:") {
		return s.helperResultTx(tx, t, n, text)
	}
	rp := t.ReportTo
	note := fmt.Sprintf("@%s finished the step you handed it (“%s”):\n%s\n\nTell your owner what came of it, in one message.", n.Slug, rp.Title, text)
	return s.enqueueTx(tx, Turn{NodeID: rp.NodeID, RoomID: rp.RoomID, Lane: rp.Lane, Private: rp.Private, Reason: ReasonReport,
		ByOwner: rp.ByOwner, Depth: rp.Depth, OperationID: "report:" + originOf(t), Note: note})
}
