package node

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/ensemblework/ensemble/runtime/assistant"
	"github.com/ensemblework/ensemble/runtime/ledger"
	"github.com/ensemblework/ensemble/runtime/models"
	"github.com/ensemblework/ensemble/runtime/store"
)

// noReply is what a node answers when nothing needs saying; it posts nothing.
const noReply = "(no reply)"

// turnCtx is what a node's own tools read of the turn that calls them.
type turnCtx struct {
	s    *Service
	rt   *runningTurn
	node Node
	room Room
}

// runTurn runs one turn: the assistant's own loop with the node's persona and tools, over the
// thread's new messages framed as one user message (spec 002 §5.2).
func (s *Service) runTurn(rt *runningTurn) {
	t := rt.turn
	ctx := rt.ctx
	n, err := s.Node(ctx, t.NodeID)
	if err != nil {
		s.endTurn(t, TurnStopped, "the node is gone")
		return
	}
	r, err := s.Room(ctx, t.RoomID)
	if err != nil {
		s.endTurn(t, TurnStopped, "the room is gone")
		return
	}
	conv, seen, err := s.thread(ctx, t)
	if err != nil {
		s.endTurn(t, TurnFailed, err.Error())
		return
	}
	var msgs []Message
	if isConvLane(t.Lane) {
		if msgs, err = s.threadMessages(ctx, t, seen); err != nil {
			s.endTurn(t, TurnFailed, err.Error())
			return
		}
		if len(msgs) == 0 && t.Reason == ReasonMessage {
			s.endTurn(t, TurnDone, "")
			return
		}
	}
	text := frame(r, n, msgs, t)
	tools := toolsFor(t, r, n, text, t.ByOwner && s.talksOfCode(ctx, n.ID, r.ID)) // from the words asked, not the work board's
	tools = append(tools, computerToolsFor(t, n, text, s.cfg.Computer != nil)...)
	tools = append(tools, browserToolsFor(t, n, text, s.cfg.Browser != nil, s.hasTabs(n.ID))...)
	text = joinNotes(text, s.doneNote(ctx, t, n, msgs))
	if isConvLane(t.Lane) {
		text = joinNotes(text, s.taskBoard(ctx, n))
	}
	provider, model, effort := s.modelFor(ctx, n)
	s.live(KindStatus, r.ID, Status{RoomID: r.ID, NodeID: n.ID, State: "thinking", Private: t.Private, TurnID: t.ID})
	defer s.live(KindStatus, r.ID, Status{RoomID: r.ID, NodeID: n.ID, State: "idle", Private: t.Private, TurnID: t.ID})
	req := assistant.TurnRequest{ConversationID: conv, Text: text, Provider: provider, Model: model, Effort: effort,
		Agent: &assistant.Agent{
			Actor:        ledger.Actor{Kind: ledger.Node, ID: n.ID, Name: n.Name},
			Instructions: s.persona(ctx, n, r, t),
			Tools:        tools,
			Without:      replacedTools,
			Preview:      !t.ByOwner,
			ReadOnly:     n.ParentID != "",
			Turn:         &turnCtx{s: s, rt: rt, node: n, room: r},
		}}
	reply, err := s.cfg.Assistant.Turn(ctx, req, s.emitter(rt, n))
	s.finish(rt, n, r, reply, err)
}

// replacedTools are the assistant's tools a node does without: the session tools of spec 002 §8
// (sessiontools.go) replace hub_assign_to_agent and hub_list_agent_sessions.
var replacedTools = []string{"hub_assign_to_agent", "hub_list_agent_sessions"}

// thread is the assistant conversation and read cursor of the turn's thread, made on first use.
func (s *Service) thread(ctx context.Context, t Turn) (conv string, seen int64, err error) {
	if !isConvLane(t.Lane) {
		return t.ConversationID, 0, nil
	}
	col, seenCol := "conversation_id", "seen_seq"
	if t.Private {
		col, seenCol = "private_conversation_id", "private_seen_seq"
	}
	err = s.cfg.Store.Reader().QueryRowContext(ctx, "SELECT "+col+", "+seenCol+" FROM node_room_members WHERE room_id = ? AND node_id = ?",
		t.RoomID, t.NodeID).Scan(&conv, &seen)
	if err != nil {
		return "", 0, fmt.Errorf("node: this node is no longer in the room: %w", err)
	}
	if conv != "" {
		return conv, seen, nil
	}
	conv = ledger.NewID("cnv_")
	err = s.cfg.Writer.Exec(ctx, func(tx *ledger.Tx) error {
		_, err := tx.ExecContext(tx.Context(), "UPDATE node_room_members SET "+col+" = ? WHERE room_id = ? AND node_id = ? AND "+col+" = ''",
			conv, t.RoomID, t.NodeID)
		return err
	})
	if err != nil {
		return "", 0, fmt.Errorf("node: keep the thread's conversation: %w", err)
	}
	return conv, seen, nil
}

// threadMessages are the thread's messages the node has not read, up to the turn's: the shared
// thread reads only what everyone in the room sees, the private one everything.
func (s *Service) threadMessages(ctx context.Context, t Turn, seen int64) ([]Message, error) {
	where := "WHERE room_id = ? AND seq > ? AND seq <= ? AND kind = 'text' AND deleted = 0 AND NOT (author = 'node' AND author_node_id = ?)"
	if !t.Private {
		where += " AND visible_to = '[]'"
	}
	return s.queryMessages(ctx, s.cfg.Store.Reader(), where+" ORDER BY seq", t.RoomID, seen, t.UptoSeq, t.NodeID)
}

// modelFor is the provider, model and effort a node's turns use: its own, else the assistant's.
func (s *Service) modelFor(ctx context.Context, n Node) (provider, model, effort string) {
	st, err := s.cfg.Assistant.Settings(ctx)
	if err != nil {
		s.log.Warn("node: read the assistant's settings", "err", err)
	}
	provider, model, effort = st.Provider, st.Model, n.Effort
	if n.Provider != "" {
		provider, model = n.Provider, n.Model
	} else if n.Model != "" {
		model = n.Model
	}
	if n.ParentID != "" && effort == "" && models.CheckEffort(provider, model, "low") == nil {
		return provider, model, "low" // a helper thinks briefly, where the model takes a level
	}
	if effort == "" && !assistant.IsPlan(provider) {
		effort = st.Effort
	}
	return provider, model, effort
}

// emitter follows the turn as it runs: its text and tool chips go out as live frames, a tool
// that acts marks the turn acted before it runs, and each tool's receipt is written as it ends.
func (s *Service) emitter(rt *runningTurn, n Node) func(assistant.Event) {
	t := rt.turn
	fr := Frame{RoomID: t.RoomID, NodeID: n.ID, TurnID: t.ID, Private: t.Private}
	return func(ev assistant.Event) {
		switch ev.Type {
		case assistant.EventText:
			f := fr
			f.Type, f.Text = "text", ev.Text
			s.live(KindFrame, t.RoomID, f)
		case assistant.EventRefs:
			f := fr
			f.Type, f.Refs, _ = "refs", nil, ""
			f.Refs, _ = json.Marshal(ev.Refs)
			s.live(KindFrame, t.RoomID, f)
		case assistant.EventTool:
			row := ev.Tool
			if row.Status == "running" && (row.IsWrite || actingTools[row.Name]) {
				if err := s.markActed(rt); err != nil {
					s.log.Warn("node: mark a turn acted", "turn", t.ID, "err", err)
				}
			}
			if row.Status != "running" {
				s.addReceipt(rt, Receipt{CallID: row.CallID, Name: row.Name, Status: row.Status, Summary: row.Summary,
					IsWrite: row.IsWrite, At: s.now()})
			}
			f := fr
			f.Type = "tool"
			f.Tool, _ = json.Marshal(row)
			s.live(KindFrame, t.RoomID, f)
		}
	}
}

// finish ends a turn: its reply posted as the node (or nothing for "(no reply)"), its held
// writes as one card, its thread read up to the turn, in one transaction.
func (s *Service) finish(rt *runningTurn, n Node, r Room, reply assistant.Reply, err error) {
	t := rt.turn
	cause := context.Cause(rt.ctx)
	switch {
	case s.life.Err() != nil:
		return // the runtime is stopping: the next start reruns or resumes the turn
	case errors.Is(cause, errMerged), errors.Is(cause, errWithdrawn):
		s.endTurn(t, TurnAborted, cause.Error())
		return
	case errors.Is(cause, errStopped):
		s.endTurn(t, TurnStopped, "")
		return
	case err != nil:
		s.failed(rt, n, r, err)
		return
	}
	held := heldRows(reply.Tools)
	err = s.cfg.Writer.Exec(context.WithoutCancel(rt.ctx), func(tx *ledger.Tx) error {
		if err := s.readUpToTx(tx, t); err != nil {
			return err
		}
		text := strings.TrimSpace(reply.Text)
		if !isConvLane(t.Lane) {
			if err := s.reportTx(tx, t, n, text, reply.Tools); err != nil {
				return err
			}
			if !rt.parked.Load() {
				if err := s.routineEndTx(tx, t, n, text, ""); err != nil {
					return err
				}
			}
		} else if text != "" && t.Reason != ReasonQuestion && !strings.EqualFold(strings.Trim(text, " ."), strings.Trim(noReply, " .")) && !rt.parked.Load() {
			if err := s.postReplyTx(tx, t, n, r, text, reply.Tools); err != nil {
				return err
			}
		}
		if len(held) > 0 {
			if err := s.heldCardTx(tx, t, n, reply.ConversationID, held); err != nil {
				return err
			}
		}
		status := TurnDone
		if rt.parked.Load() {
			status = TurnParked
		}
		return endTurnTx(tx, t.ID, status, "")
	})
	if err != nil {
		s.log.Warn("node: finish a turn", "turn", t.ID, "err", err)
		s.endTurn(t, TurnFailed, err.Error())
	}
	s.wake()
}

// postReplyTx posts a conversation turn's reply as the node, and routes it: a node's message
// wakes only the nodes it mentions, under the brakes.
func (s *Service) postReplyTx(tx *ledger.Tx, t Turn, n Node, r Room, text string, rows []assistant.ToolRow) error {
	data := map[string]any{}
	if chips := chipsOf(rows); len(chips) > 0 {
		data["tools"] = chips
	}
	b, _ := json.Marshal(data)
	m := Message{RoomID: t.RoomID, Author: AuthorNode, NodeID: n.ID, Kind: KindText, Body: text, Data: b,
		Private: t.Private, Depth: t.Depth + 1, TurnID: t.ID}
	m, err := s.insertMessageTx(tx, m)
	if err != nil {
		return err
	}
	_, err = s.routeTx(tx, r, m)
	return err
}

// Chip is a tool call as the chat shows it beside a reply.
type Chip struct {
	Name    string `json:"name"`
	Status  string `json:"status"`
	Summary string `json:"summary,omitempty"`
	Group   string `json:"group,omitempty"`
}

func chipsOf(rows []assistant.ToolRow) []Chip {
	var out []Chip
	for _, r := range rows {
		out = append(out, Chip{Name: r.Name, Status: r.Status, Summary: r.Summary, Group: r.Group})
	}
	return out
}

func heldRows(rows []assistant.ToolRow) []assistant.ToolRow {
	var out []assistant.ToolRow
	for _, r := range rows {
		if r.ProposalID != "" && (r.Status == "proposed" || r.Status == "waiting") {
			out = append(out, r)
		}
	}
	return out
}

// readUpToTx moves the thread's read cursor to the messages the turn answered.
func (s *Service) readUpToTx(tx *ledger.Tx, t Turn) error {
	if !isConvLane(t.Lane) {
		return nil
	}
	col := "seen_seq"
	if t.Private {
		col = "private_seen_seq"
	}
	_, err := tx.ExecContext(tx.Context(), "UPDATE node_room_members SET "+col+" = max("+col+", ?) WHERE room_id = ? AND node_id = ?",
		t.UptoSeq, t.RoomID, t.NodeID)
	if err != nil {
		return fmt.Errorf("node: move the read cursor: %w", err)
	}
	return nil
}

func endTurnTx(tx *ledger.Tx, id, status, why string) error {
	_, err := tx.ExecContext(tx.Context(), "UPDATE node_turns SET status = ?, error = ?, ended_at = ? WHERE id = ?",
		status, why, store.Stamp(tx.Now()), id)
	if err != nil {
		return fmt.Errorf("node: end a turn: %w", err)
	}
	return helpersReportTx(tx, id, "") // a turn whose helpers all reported while it ran
}

func (s *Service) endTurn(t Turn, status, why string) {
	err := s.cfg.Writer.Exec(context.WithoutCancel(s.life), func(tx *ledger.Tx) error { return endTurnTx(tx, t.ID, status, why) })
	if err != nil {
		s.log.Warn("node: end a turn", "turn", t.ID, "err", err)
	}
}

// failed ends a turn whose model call failed. A rate limit before any tool ran tries again later
// (8, 30 and 90 seconds) as a new queued turn that leaves nothing in the room; anything else, or
// the last try, is one notice only the owner sees.
func (s *Service) failed(rt *runningTurn, n Node, r Room, cause error) {
	t := rt.turn
	delays := s.cfg.RetryDelays
	err := s.cfg.Writer.Exec(context.WithoutCancel(rt.ctx), func(tx *ledger.Tx) error {
		if models.IsRateLimit(cause) && !rt.acted.Load() && t.Attempt < len(delays) {
			next := t
			next.ID, next.Reason, next.Attempt = "", ReasonRetry, t.Attempt+1
			next.OperationID = fmt.Sprintf("retry:%s:%d", originOf(t), t.Attempt+1)
			next.OriginID, next.RunAfter = originOf(t), tx.Now().Add(delays[t.Attempt])
			if err := s.enqueueTx(tx, next); err != nil {
				return err
			}
			return endTurnTx(tx, t.ID, TurnFailed, "rate limited: tried again later")
		}
		msg := cause.Error()
		if models.IsRateLimit(cause) {
			msg = fmt.Sprintf("%s could not answer: the model's rate limit stopped this turn. Ask again in a minute.", n.Name)
		}
		if isConvLane(t.Lane) {
			notice := Message{RoomID: t.RoomID, Author: AuthorNode, NodeID: n.ID, Kind: KindError, Body: msg, Private: true,
				Depth: t.Depth + 1, TurnID: t.ID}
			if _, err := s.insertMessageTx(tx, notice); err != nil {
				return err
			}
			if err := s.readUpToTx(tx, t); err != nil {
				return err
			}
		} else if err := s.reportTx(tx, t, n, "It could not finish: "+msg, nil); err != nil {
			return err
		}
		if err := s.routineEndTx(tx, t, n, "", msg); err != nil {
			return err
		}
		return endTurnTx(tx, t.ID, TurnFailed, msg)
	})
	if err != nil {
		s.log.Warn("node: end a failed turn", "turn", t.ID, "err", err)
	}
	s.wake()
}
