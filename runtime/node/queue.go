package node

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"github.com/ensemblework/ensemble/runtime/ledger"
	"github.com/ensemblework/ensemble/runtime/store"
)

// Turn is one queued or finished turn of a node (spec 002 §5.1).
type Turn struct {
	ID          string     `json:"id"`
	NodeID      string     `json:"nodeId"`
	RoomID      string     `json:"roomId"`
	Lane        string     `json:"lane"`
	Private     bool       `json:"private"`
	Reason      string     `json:"reason"`
	Status      string     `json:"status"`
	ByOwner     bool       `json:"byOwner"`
	MessageID   string     `json:"messageId,omitempty"`
	UptoSeq     int64      `json:"uptoSeq"`
	Depth       int        `json:"depth"`
	OperationID string     `json:"operationId,omitempty"`
	OriginID    string     `json:"originTurnId,omitempty"`
	Attempt     int        `json:"attempt"`
	Note        string     `json:"note,omitempty"`
	Receipts    []Receipt  `json:"receipts"`
	ActedAt     *time.Time `json:"actedAt,omitempty"`
	RunAfter    time.Time  `json:"runAfter"`
	Error       string     `json:"error,omitempty"`
	// ConversationID is a work turn's own assistant conversation.
	ConversationID string `json:"conversationId,omitempty"`
	// ReportTo is where a delegated work turn's result goes.
	ReportTo  *Report   `json:"reportTo,omitempty"`
	CreatedAt time.Time `json:"createdAt"`
}

// Report is who hears a delegated step's result: the node that delegated it, in its lane.
type Report struct {
	NodeID  string `json:"nodeId"`
	RoomID  string `json:"roomId"`
	Lane    string `json:"lane"`
	Private bool   `json:"private"`
	ByOwner bool   `json:"byOwner"`
	Depth   int    `json:"depth"`
	Title   string `json:"title"`
}

// Receipt is one tool a turn ran, written as it ended.
type Receipt struct {
	CallID  string    `json:"callId"`
	Name    string    `json:"name"`
	Status  string    `json:"status"`
	Summary string    `json:"summary,omitempty"`
	IsWrite bool      `json:"isWrite,omitempty"`
	At      time.Time `json:"at"`
}

// Why a turn runs. Only a message turn absorbs later messages or is aborted by one: the others
// are bound to something (a card's answer, a restart, a retry) and always finish.
const (
	ReasonMessage  = "message"
	ReasonApproval = "approval"
	ReasonResume   = "resume"
	ReasonRetry    = "retry"
)

// Turn statuses.
const (
	TurnQueued  = "queued"
	TurnRunning = "running"
	TurnDone    = "done"
	TurnFailed  = "failed"
	TurnAborted = "aborted"
	TurnParked  = "parked"
	TurnStopped = "stopped"
	TurnDropped = "dropped"
)

// convLane is the conversation lane of a room's thread: the only lane that posts.
func convLane(room string, private bool) string {
	if private {
		return "conv:" + room + ":p"
	}
	return "conv:" + room + ":s"
}

func isConvLane(lane string) bool { return strings.HasPrefix(lane, "conv:") }

const turnCols = `id, node_id, room_id, lane, private, reason, status, by_owner, coalesce(message_id, ''), upto_seq, depth,
	coalesce(operation_id, ''), coalesce(origin_turn_id, ''), attempt, note, receipts, acted_at, run_after, error, conversation_id, report_to, created_at`

func scanTurn(sc scanner) (Turn, error) {
	var t Turn
	var private, byOwner int
	var receipts, runAfter, created, report string
	var acted *string
	err := sc.Scan(&t.ID, &t.NodeID, &t.RoomID, &t.Lane, &private, &t.Reason, &t.Status, &byOwner, &t.MessageID, &t.UptoSeq,
		&t.Depth, &t.OperationID, &t.OriginID, &t.Attempt, &t.Note, &receipts, &acted, &runAfter, &t.Error, &t.ConversationID, &report, &created)
	if err != nil {
		return Turn{}, err
	}
	t.Private, t.ByOwner = private == 1, byOwner == 1
	if report != "" {
		t.ReportTo = &Report{}
		json.Unmarshal([]byte(report), t.ReportTo)
	}
	json.Unmarshal([]byte(receipts), &t.Receipts)
	if acted != nil {
		at := store.ReadTime(*acted)
		t.ActedAt = &at
	}
	t.RunAfter, t.CreatedAt = store.ReadTime(runAfter), store.ReadTime(created)
	return t, nil
}

func (s *Service) queryTurns(ctx context.Context, db querier, where string, args ...any) ([]Turn, error) {
	return queryAll(ctx, db, "read turns", "SELECT "+turnCols+" FROM node_turns "+where, args, scanTurn)
}

// Turns lists a node's most recent turns, newest first.
func (s *Service) Turns(ctx context.Context, nodeID string, limit int) ([]Turn, error) {
	if limit <= 0 || limit > 200 {
		limit = 50
	}
	return s.queryTurns(ctx, s.cfg.Store.Reader(), "WHERE node_id = ? ORDER BY created_at DESC, rowid DESC LIMIT ?", nodeID, limit)
}

// enqueueTx queues t inside tx. A message turn folds into a message turn already queued in its
// lane (it answers both); any turn with an operation id already queued starts nothing new.
func (s *Service) enqueueTx(tx *ledger.Tx, t Turn) error { return enqueueTurnTx(tx, t) }

// enqueueTurnTx queues t inside tx (enqueueTx, for the code outside a Service method).
func enqueueTurnTx(tx *ledger.Tx, t Turn) error {
	ctx := tx.Context()
	if t.Reason == ReasonMessage {
		var id string
		err := tx.QueryRowContext(ctx, `UPDATE node_turns SET upto_seq = max(upto_seq, ?), by_owner = min(by_owner, ?)
			WHERE node_id = ? AND lane = ? AND status = 'queued' AND reason = 'message' RETURNING id`,
			t.UptoSeq, b2i(t.ByOwner), t.NodeID, t.Lane).Scan(&id)
		if err == nil {
			return nil
		}
	}
	if t.ID == "" {
		t.ID = ledger.NewID("trn_")
	}
	if t.RunAfter.IsZero() {
		t.RunAfter = tx.Now()
	}
	receipts, _ := json.Marshal(t.Receipts)
	if t.Receipts == nil {
		receipts = []byte("[]")
	}
	_, err := tx.ExecContext(ctx, `INSERT INTO node_turns (id, node_id, room_id, lane, private, reason, status, by_owner, message_id,
		upto_seq, depth, operation_id, origin_turn_id, attempt, note, receipts, run_after, conversation_id, report_to, created_at)
		VALUES (?, ?, ?, ?, ?, ?, 'queued', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (operation_id) DO NOTHING`,
		t.ID, t.NodeID, t.RoomID, t.Lane, b2i(t.Private), t.Reason, b2i(t.ByOwner), nullable(t.MessageID), t.UptoSeq, t.Depth,
		nullable(t.OperationID), nullable(t.OriginID), t.Attempt, t.Note, string(receipts), store.Stamp(t.RunAfter), t.ConversationID, reportJSON(t.ReportTo), store.Stamp(tx.Now()))
	if err != nil {
		return fmt.Errorf("node: queue a turn: %w", err)
	}
	return nil
}

func reportJSON(r *Report) string {
	if r == nil {
		return ""
	}
	b, _ := json.Marshal(r)
	return string(b)
}

// routeTx wakes who answers m (WhoSpeaks) inside t: the brakes' status line, paused nodes the
// person's message resumes, and a turn per node woken. It returns the lanes where a turn running
// now may be aborted for m (a person's message).
func (s *Service) routeTx(t *ledger.Tx, r Room, m Message) ([]string, error) {
	ctx := t.Context()
	members := make([]Member, 0, len(r.Members))
	for _, mb := range r.Members {
		members = append(members, Member{NodeID: mb.NodeID, Handle: mb.Slug, Role: mb.Role, Paused: mb.Status == StatusPaused})
	}
	st, err := routeState(t, m)
	if err != nil {
		return nil, err
	}
	route := WhoSpeaks(RouteRoom{Kind: r.Kind, DMNode: r.DMNodeID, LeadID: r.LeadID, Members: members},
		RouteMessage{FromPerson: m.Author == AuthorPerson, FromNode: m.NodeID, Kind: m.Kind, Body: m.Body, Private: m.Private}, st)
	if route.Brake != "" {
		line := Message{RoomID: r.ID, Author: AuthorSystem, Kind: KindStatusLn, Body: route.Brake, Depth: m.Depth,
			Data: json.RawMessage(`{"brake":true}`)}
		_, err := s.insertMessageTx(t, line)
		return nil, err
	}
	for _, id := range route.Resume {
		if _, err := t.ExecContext(ctx, "UPDATE node_agents SET status = 'active', updated_at = ? WHERE id = ? AND status = 'paused'",
			store.Stamp(t.Now()), id); err != nil {
			return nil, fmt.Errorf("node: resume a node: %w", err)
		}
		if err := t.Emit(KindNode, id, NodeChanged{ID: id, Change: "resumed"}); err != nil {
			return nil, err
		}
	}
	lane := convLane(r.ID, m.Private)
	var lanes []string
	for _, id := range route.Wake {
		err := s.enqueueTx(t, Turn{NodeID: id, RoomID: r.ID, Lane: lane, Private: m.Private, Reason: ReasonMessage,
			ByOwner: m.Author == AuthorPerson, MessageID: m.ID, UptoSeq: m.Seq, Depth: m.Depth,
			OperationID: "msg:" + m.ID + ":" + id})
		if err != nil {
			return nil, err
		}
		if m.Author == AuthorPerson {
			lanes = append(lanes, id+"|"+lane)
		}
	}
	return lanes, nil
}

// routeState reads what the brakes need: node messages in a row, and whether a brake already
// fired since the person last wrote.
func routeState(t *ledger.Tx, m Message) (RouteState, error) {
	st := RouteState{Depth: m.Depth}
	if m.Author == AuthorPerson {
		return st, nil
	}
	rows, err := t.QueryContext(t.Context(), "SELECT author FROM node_messages WHERE room_id = ? AND kind = 'text' AND seq <= ? ORDER BY seq DESC LIMIT ?",
		m.RoomID, m.Seq, MaxNodeRun+1)
	if err != nil {
		return st, fmt.Errorf("node: read the room's recent messages: %w", err)
	}
	for rows.Next() {
		var a string
		rows.Scan(&a)
		if a != AuthorNode {
			break
		}
		st.NodeRun++
	}
	rows.Close()
	var n int
	err = t.QueryRowContext(t.Context(), `SELECT count(*) FROM node_messages WHERE room_id = ? AND kind = 'status'
		AND json_extract(data, '$.brake') = 1
		AND seq > (SELECT coalesce(max(seq), 0) FROM node_messages WHERE room_id = ? AND author = 'person')`, m.RoomID, m.RoomID).Scan(&n)
	if err != nil {
		return st, fmt.Errorf("node: read the room's brakes: %w", err)
	}
	st.Braked = n > 0
	return st, nil
}

// runningTurn is a turn running now.
type runningTurn struct {
	turn   Turn
	ctx    context.Context
	cancel context.CancelCauseFunc
	acted  atomic.Bool
	parked atomic.Bool
}

// Why a running turn was cut short.
var (
	errMerged  = errors.New("a newer message from the person came before this turn acted")
	errStopped = errors.New("stopped")
	errClosing = errors.New("the runtime is stopping")
)

// abortUnacted aborts, for each "node|lane", the message turn running there if it has not acted
// yet: the turn queued behind it answers both messages.
func (s *Service) abortUnacted(lanes []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, nl := range lanes {
		node, lane, _ := strings.Cut(nl, "|")
		rt := s.running[lane]
		if rt != nil && rt.turn.NodeID == node && rt.turn.Reason == ReasonMessage && !rt.acted.Load() {
			rt.cancel(errMerged)
		}
	}
}

// stopRunning stops the running turns match selects.
func (s *Service) stopRunning(match func(Turn) bool) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, rt := range s.running {
		if match(rt.turn) {
			rt.cancel(errStopped)
			n++
		}
	}
	return n
}

// stopNode stops a node's running turns and drops its queued ones.
func (s *Service) stopNode(id string) {
	s.stopRunning(func(t Turn) bool { return t.NodeID == id })
	s.dropQueued("node_id = ?", id)
}

// stopRoom stops the turns running in a room and drops its queued ones.
func (s *Service) stopRoom(id string) {
	s.stopRunning(func(t Turn) bool { return t.RoomID == id })
	s.dropQueued("room_id = ?", id)
}

func (s *Service) dropQueued(where string, args ...any) int {
	var n int64
	err := s.cfg.Writer.Exec(context.WithoutCancel(s.life), func(t *ledger.Tx) error {
		res, err := t.ExecContext(t.Context(), "UPDATE node_turns SET status = 'stopped', ended_at = ? WHERE status = 'queued' AND "+where,
			append([]any{store.Stamp(t.Now())}, args...)...)
		if err != nil {
			return err
		}
		n, _ = res.RowsAffected()
		return nil
	})
	if err != nil {
		s.log.Warn("node: drop queued turns", "err", err)
	}
	return int(n)
}

// wake tells the engine to look at the queue.
func (s *Service) wake() {
	select {
	case s.kick <- struct{}{}:
	default:
	}
}
