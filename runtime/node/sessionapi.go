package node

import (
	"context"
	"strings"

	"github.com/ensemblework/ensemble/runtime/problem"
)

// The owner controls a session from its card with the functions the node's tools call (spec 002
// §8.9). The routes act as the session's node, in the thread of its newest run of that node (its
// DM when it has none); a session no node manages is read but not controlled.

// SessionRun is one run of a session as GET /api/node/sessions/{id} shows it.
type SessionRun struct {
	ID       string      `json:"id"`
	JobID    string      `json:"jobId,omitempty"`
	NodeID   string      `json:"nodeId"`
	Title    string      `json:"title"`
	Prompt   string      `json:"prompt"`
	State    string      `json:"state"` // queued, started, cancelled, failed
	Status   string      `json:"status,omitempty"`
	Position int         `json:"position,omitempty"`
	Summary  string      `json:"summary,omitempty"`
	Settings RunSettings `json:"settings"`
	Quiet    bool        `json:"quiet,omitempty"`
	Card     *CardRef    `json:"card,omitempty"`
}

// CardRef is where a run's card is.
type CardRef struct {
	MessageID string `json:"messageId"`
	RoomID    string `json:"roomId"`
}

// SessionDetail is a session with its 20 newest runs.
type SessionDetail struct {
	SessionInfo
	Runs []SessionRun `json:"runs"`
}

// SessionControl is POST /api/node/sessions/{id}/control's body.
type SessionControl struct {
	Action string `json:"action"` // queue, steer, replace, stop
	Prompt string `json:"prompt,omitempty"`
	Title  string `json:"title,omitempty"`
	Queued string `json:"queued,omitempty"` // keep, drop (stop)
}

// ControlResult is what a control did: the message it queued or started, if any.
type ControlResult struct {
	OK    bool   `json:"ok"`
	ID    string `json:"id,omitempty"`
	JobID string `json:"jobId,omitempty"`
}

// AgentSessions are the sessions nodes have driven, most recently active first; q narrows them
// by words in their agent, folder or messages.
func (s *Service) AgentSessions(ctx context.Context, q string, limit int) ([]SessionInfo, error) {
	if limit <= 0 {
		limit = 20
	}
	limit = min(limit, 50)
	all, err := s.NodeSessions(ctx, "")
	if err != nil {
		return nil, err
	}
	q = strings.ToLower(strings.TrimSpace(q))
	out := []SessionInfo{}
	for _, ss := range all {
		if q != "" && !strings.Contains(strings.ToLower(s.sessionText(ctx, ss)), q) {
			continue
		}
		if out = append(out, ss); len(out) == limit {
			break
		}
	}
	return out, nil
}

func (s *Service) sessionText(ctx context.Context, ss SessionInfo) string {
	parts := []string{ss.ID, ss.Agent, ss.Model, ss.Folder, ss.Status}
	runs, _ := s.queryRuns(ctx, s.cfg.Store.Reader(), "WHERE session_root = ?", ss.ID)
	for _, r := range runs {
		parts = append(parts, r.Title)
	}
	return strings.Join(parts, " ")
}

// AgentSession is one session with its runs.
func (s *Service) AgentSession(ctx context.Context, id string) (SessionDetail, error) {
	if s.cfg.Jobs == nil {
		return SessionDetail{}, errNoJobs
	}
	db := s.cfg.Store.Reader()
	root, err := s.sessionRoot(ctx, db, id)
	if err != nil {
		return SessionDetail{}, err
	}
	info, err := s.sessionInfo(ctx, db, root)
	if err != nil {
		return SessionDetail{}, err
	}
	d := SessionDetail{SessionInfo: info, Runs: []SessionRun{}}
	runs, err := s.queryRuns(ctx, db, "WHERE session_root = ? ORDER BY created_at DESC, rowid DESC LIMIT 20", root)
	if err != nil {
		return SessionDetail{}, err
	}
	for _, r := range runs {
		sr := SessionRun{ID: r.ID, JobID: r.JobID, NodeID: r.NodeID, Title: r.Title, Prompt: r.Prompt, State: r.State,
			Settings: r.Settings, Quiet: r.Quiet}
		if r.State == runQueued {
			sr.Position = r.Position
		}
		if r.JobID != "" {
			if j, err := s.cfg.Jobs.Get(ctx, r.JobID); err == nil {
				sr.Status, sr.Summary = string(j.Status), j.Summary
			}
		}
		if r.CardID != "" {
			sr.Card = &CardRef{MessageID: r.CardID, RoomID: roomOfLane(r.Lane, r.RoomID)}
		}
		d.Runs = append(d.Runs, sr)
	}
	return d, nil
}

// ownerOrigin is the owner acting on the card as the session's node, in the thread of its newest
// run of that node.
func (s *Service) ownerOrigin(ctx context.Context, id string) (string, origin, error) {
	if s.cfg.Jobs == nil {
		return "", origin{}, errNoJobs
	}
	db := s.cfg.Store.Reader()
	root, err := s.sessionRoot(ctx, db, id)
	if err != nil {
		return "", origin{}, err
	}
	owner, err := sessionOwner(ctx, db, root)
	if err != nil {
		return "", origin{}, err
	}
	if owner == "" {
		return "", origin{}, problem.Conflict("No node manages this session; hand it to one of your nodes first.")
	}
	n, err := s.Node(ctx, owner)
	if err != nil {
		return "", origin{}, err
	}
	o := origin{node: n, roomID: n.DMRoomID, lane: convLane(n.DMRoomID, false), byOwner: true, who: "owner", source: "card"}
	runs, err := s.queryRuns(ctx, db, "WHERE session_root = ? AND node_id = ? ORDER BY created_at DESC, rowid DESC LIMIT 1", root, owner)
	if err != nil {
		return "", origin{}, err
	}
	if len(runs) == 1 {
		o.roomID, o.lane, o.private = runs[0].RoomID, runs[0].Lane, runs[0].Private
	}
	return root, o, nil
}

// ControlSession queues, steers or replaces with a message, or stops the session's run (the
// card's controls).
func (s *Service) ControlSession(ctx context.Context, id string, c SessionControl) (ControlResult, error) {
	switch c.Action {
	case DeliverQueue, DeliverSteer, DeliverReplace, "stop":
	default:
		return ControlResult{}, problem.Invalid("action is queue, steer, replace or stop, not %q.", c.Action)
	}
	if c.Action == "stop" && c.Queued != "" && c.Queued != "keep" && c.Queued != "drop" {
		return ControlResult{}, problem.Invalid("queued is keep or drop, not %q.", c.Queued)
	}
	if c.Action != "stop" && strings.TrimSpace(c.Prompt) == "" {
		return ControlResult{}, problem.Invalid("Say what the agent should do (prompt).")
	}
	root, o, err := s.ownerOrigin(ctx, id)
	if err != nil {
		return ControlResult{}, err
	}
	if c.Action == "stop" {
		_, _, err := s.stopSession(ctx, o, root, c.Queued == "keep")
		return ControlResult{OK: err == nil}, err
	}
	r, err := s.sendToSession(ctx, o, root, c.Title, c.Prompt, c.Action)
	if err != nil {
		return ControlResult{}, err
	}
	return ControlResult{OK: true, ID: r.ID, JobID: r.JobID}, nil
}

// ReorderSession sets the order of a session's queued messages (every queued id); a stale order
// is refused (409) and changes nothing.
func (s *Service) ReorderSession(ctx context.Context, id string, order []string) error {
	if len(order) == 0 {
		return problem.Invalid("Give every queued message's id in the new order (order).")
	}
	root, o, err := s.ownerOrigin(ctx, id)
	if err != nil {
		return err
	}
	return s.editQueue(ctx, o, root, order, nil)
}

// CancelQueued takes one queued message out of a session: it never starts.
func (s *Service) CancelQueued(ctx context.Context, id, msgID string) error {
	root, o, err := s.ownerOrigin(ctx, id)
	if err != nil {
		return err
	}
	if r, err := s.runByID(ctx, msgID); err == nil {
		msgID = r.ID // a job id names its message too
	}
	return s.editQueue(ctx, o, root, nil, []string{msgID})
}

// HandOverSession gives a session to another of the owner's nodes (or one no node manages to one).
func (s *Service) HandOverSession(ctx context.Context, id, nodeRef string) (string, error) {
	if s.cfg.Jobs == nil {
		return "", errNoJobs
	}
	db := s.cfg.Store.Reader()
	root, err := s.sessionRoot(ctx, db, id)
	if err != nil {
		return "", err
	}
	to, err := s.Node(ctx, nodeRef)
	if err != nil {
		return "", err
	}
	from, err := sessionOwner(ctx, db, root)
	if err != nil {
		return "", err
	}
	if from == to.ID {
		return "", problem.Conflict("The session is already @%s's.", to.Slug)
	}
	if to.ParentID != "" {
		return "", problem.Conflict("@%s is a helper; hand the session to one of your own nodes.", to.Slug)
	}
	o := origin{node: to, who: "owner", source: "card"}
	if err := s.moveSession(ctx, o, root, from, to.ID); err != nil {
		return "", err
	}
	s.refreshSession(ctx, root)
	return to.ID, nil
}
