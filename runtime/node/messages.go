package node

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/ensemblework/ensemble/runtime/ledger"
	"github.com/ensemblework/ensemble/runtime/problem"
	"github.com/ensemblework/ensemble/runtime/store"
)

// Message is one line of a room: a person's or a node's words, a card, or a system line.
type Message struct {
	ID        string          `json:"id"`
	RoomID    string          `json:"roomId"`
	Seq       int64           `json:"seq"`
	Author    string          `json:"author"` // person, node, system
	NodeID    string          `json:"nodeId,omitempty"`
	Kind      string          `json:"kind"` // text, approval, run, plan, status, request, error
	Body      string          `json:"body"`
	Data      json.RawMessage `json:"data"`
	Private   bool            `json:"private"`
	ReplyToID string          `json:"replyToId,omitempty"`
	ClientID  string          `json:"clientId,omitempty"`
	Depth     int             `json:"depth"`
	TurnID    string          `json:"turnId,omitempty"`
	Deleted   bool            `json:"deleted,omitempty"`
	CreatedAt time.Time       `json:"createdAt"`
	UpdatedAt time.Time       `json:"updatedAt"`
}

// Authors and kinds of message.
const (
	AuthorPerson = "person"
	AuthorNode   = "node"
	AuthorSystem = "system"

	KindText     = "text"
	KindApproval = "approval"
	KindStatusLn = "status"
	KindError    = "error"
)

// ownerTag is the one person of this runtime, as visible_to names them.
const ownerTag = "owner"

// Post is a person's message.
type Post struct {
	Body string `json:"body"`
	// Attachments are the ids of files uploaded to the room for this message (Service.Attach).
	Attachments []string `json:"attachments,omitempty"`
	ClientID    string   `json:"clientId,omitempty"`
	ReplyToID   string   `json:"replyToId,omitempty"`
	Private     bool     `json:"private,omitempty"`
}

// Page is which messages to list: after or before a seq, at most Limit (50 by default, 200 at
// most), by people or nodes only.
type Page struct {
	After, Before int64
	Limit         int
	Author        string // "", people, nodes
}

const msgCols = `id, room_id, seq, author, coalesce(author_node_id, ''), kind, body, data, visible_to,
	coalesce(reply_to_id, ''), coalesce(client_id, ''), depth, coalesce(turn_id, ''), deleted, created_at, updated_at`

func scanMessage(sc scanner) (Message, error) {
	var m Message
	var data, vis, created, updated string
	var deleted int
	err := sc.Scan(&m.ID, &m.RoomID, &m.Seq, &m.Author, &m.NodeID, &m.Kind, &m.Body, &data, &vis,
		&m.ReplyToID, &m.ClientID, &m.Depth, &m.TurnID, &deleted, &created, &updated)
	if err != nil {
		return Message{}, err
	}
	m.Data, m.Private, m.Deleted = json.RawMessage(data), vis != "[]" && vis != "", deleted == 1
	m.CreatedAt, m.UpdatedAt = store.ReadTime(created), store.ReadTime(updated)
	return m, nil
}

func (s *Service) queryMessages(ctx context.Context, db querier, where string, args ...any) ([]Message, error) {
	return queryAll(ctx, db, "read messages", "SELECT "+msgCols+" FROM node_messages "+where, args, scanMessage)
}

// Messages lists a room's messages in order.
func (s *Service) Messages(ctx context.Context, roomID string, p Page) ([]Message, error) {
	db := s.cfg.Store.Reader()
	if _, err := s.roomIn(ctx, db, roomID); err != nil {
		return nil, err
	}
	if p.Limit <= 0 {
		p.Limit = 50
	}
	p.Limit = min(p.Limit, 200)
	where, args := "WHERE room_id = ?", []any{roomID}
	if p.After > 0 {
		where += " AND seq > ?"
		args = append(args, p.After)
	}
	if p.Before > 0 {
		where += " AND seq < ?"
		args = append(args, p.Before)
	}
	switch p.Author {
	case "":
	case "people":
		where += " AND author = 'person'"
	case "nodes":
		where += " AND author = 'node'"
	default:
		return nil, problem.Invalid("author is people or nodes, not %q.", p.Author)
	}
	order := " ORDER BY seq DESC LIMIT ?" // the newest page, unless reading on from After
	if p.After > 0 {
		order = " ORDER BY seq ASC LIMIT ?"
	}
	ms, err := s.queryMessages(ctx, db, where+order, append(args, p.Limit)...)
	if err != nil {
		return nil, err
	}
	if p.After <= 0 {
		for i, j := 0, len(ms)-1; i < j; i, j = i+1, j-1 {
			ms[i], ms[j] = ms[j], ms[i]
		}
	}
	return ms, nil
}

// Message returns one message, or a not-found problem.
func (s *Service) Message(ctx context.Context, id string) (Message, error) {
	return s.messageIn(ctx, s.cfg.Store.Reader(), id)
}

func (s *Service) messageIn(ctx context.Context, db querier, id string) (Message, error) {
	m, err := scanMessage(db.QueryRowContext(ctx, "SELECT "+msgCols+" FROM node_messages WHERE id = ?", id))
	if errors.Is(err, sql.ErrNoRows) {
		return Message{}, problem.NotFound("There is no message %q.", id)
	}
	if err != nil {
		return Message{}, fmt.Errorf("node: read message %s: %w", id, err)
	}
	return m, nil
}

func (s *Service) lastMessage(ctx context.Context, db querier, room string) (*Message, error) {
	ms, err := s.queryMessages(ctx, db, "WHERE room_id = ? AND deleted = 0 ORDER BY seq DESC LIMIT 1", room)
	if err != nil || len(ms) == 0 {
		return nil, err
	}
	return &ms[0], nil
}

// PostMessage posts the person's message in a room and wakes who answers it (spec 002 §4), in
// one transaction: the message and its turns land together or not at all. A resend with the same
// clientId returns the first copy. A message that is only "stop" or "stop all" stops the nodes'
// work without a model.
func (s *Service) PostMessage(ctx context.Context, roomID string, p Post) (Message, error) {
	p.Body = strings.TrimSpace(p.Body)
	if p.Body == "" && len(p.Attachments) == 0 {
		return Message{}, problem.Invalid("Write a message first.")
	}
	if len(p.Attachments) > 10 {
		return Message{}, problem.Invalid("A message carries at most 10 files.")
	}
	if len(p.Body) > MaxBodyLen {
		return Message{}, problem.Invalid("A message is at most %d characters; this one has %d.", MaxBodyLen, len(p.Body))
	}
	if len(p.ClientID) > 100 {
		return Message{}, problem.Invalid("A clientId is at most 100 characters.")
	}
	if scope, ok := stopCommand(p.Body); ok {
		return s.stopFromChat(ctx, roomID, p, scope)
	}
	var m Message
	var aborts []string
	err := s.cfg.Writer.Exec(ctx, func(t *ledger.Tx) error {
		r, err := s.roomIn(t.Context(), t, roomID)
		if err != nil {
			return err
		}
		if r.Kind == RoomTask {
			return problem.New(problem.KindForbidden, "A helper's room is for reading; write to its node in your DM or crew.")
		}
		if p.ClientID != "" {
			if prev, err := s.queryMessages(t.Context(), t, "WHERE room_id = ? AND client_id = ?", roomID, p.ClientID); err != nil {
				return err
			} else if len(prev) > 0 {
				m = prev[0]
				return ledger.ErrNoChange
			}
		}
		if p.ReplyToID != "" {
			q, err := s.messageIn(t.Context(), t, p.ReplyToID)
			if err != nil || q.RoomID != roomID {
				return problem.Invalid("The message replied to is not in this room.")
			}
			if q.Private && !p.Private {
				return problem.Invalid("A reply everyone sees cannot quote a private message.")
			}
		}
		m = Message{RoomID: roomID, Author: AuthorPerson, Kind: KindText, Body: p.Body, Private: p.Private,
			ReplyToID: p.ReplyToID, ClientID: p.ClientID}
		if len(p.Attachments) > 0 {
			files, err := s.takeUploads(roomID, p.Attachments)
			if err != nil {
				return err
			}
			m.Data, _ = json.Marshal(FileData{Type: "file", Files: files})
		}
		if m, err = s.insertMessageTx(t, m); err != nil {
			return err
		}
		// The person has read everything up to their own message.
		if _, err := t.ExecContext(t.Context(), "UPDATE node_rooms SET read_seq = ? WHERE id = ?", m.Seq, roomID); err != nil {
			return fmt.Errorf("node: mark read: %w", err)
		}
		aborts, err = s.routeTx(t, r, m)
		return err
	})
	if err != nil {
		return Message{}, err
	}
	s.abortUnacted(aborts)
	s.wake()
	return m, nil
}

// insertMessageTx numbers m in its room and writes it.
func (s *Service) insertMessageTx(t *ledger.Tx, m Message) (Message, error) {
	ctx := t.Context()
	if err := t.QueryRowContext(ctx, "UPDATE node_rooms SET next_seq = next_seq + 1, updated_at = ? WHERE id = ? RETURNING next_seq - 1",
		store.Stamp(t.Now()), m.RoomID).Scan(&m.Seq); err != nil {
		return Message{}, fmt.Errorf("node: number a message: %w", err)
	}
	m.ID = ledger.NewID("msg_")
	m.CreatedAt, m.UpdatedAt = t.Now(), t.Now()
	if len(m.Data) == 0 {
		m.Data = json.RawMessage("{}")
	}
	vis := "[]"
	if m.Private {
		vis = `["` + ownerTag + `"]`
	}
	now := store.Stamp(t.Now())
	_, err := t.ExecContext(ctx, `INSERT INTO node_messages (id, room_id, seq, author, author_node_id, kind, body, data, visible_to,
		reply_to_id, client_id, depth, turn_id, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		m.ID, m.RoomID, m.Seq, m.Author, nullable(m.NodeID), m.Kind, m.Body, string(m.Data), vis,
		nullable(m.ReplyToID), nullable(m.ClientID), m.Depth, nullable(m.TurnID), now, now)
	if err != nil {
		return Message{}, fmt.Errorf("node: write a message: %w", err)
	}
	return m, t.Emit(KindMessage, m.RoomID, m)
}

// updateMessageTx rewrites a message's body and data and announces it.
func (s *Service) updateMessageTx(t *ledger.Tx, m Message) error {
	_, err := t.ExecContext(t.Context(), "UPDATE node_messages SET body = ?, data = ?, deleted = ?, updated_at = ? WHERE id = ?",
		m.Body, string(m.Data), b2i(m.Deleted), store.Stamp(t.Now()), m.ID)
	if err != nil {
		return fmt.Errorf("node: change a message: %w", err)
	}
	m.UpdatedAt = t.Now()
	return t.Emit(KindMessageUpdated, m.RoomID, m)
}

// MarkRead moves the person's read marker in a room up to seq.
func (s *Service) MarkRead(ctx context.Context, roomID string, seq int64) error {
	if seq < 0 {
		return problem.Invalid("seq is a message's number, not %d.", seq)
	}
	return s.cfg.Writer.Exec(ctx, func(t *ledger.Tx) error {
		res, err := t.ExecContext(t.Context(), "UPDATE node_rooms SET read_seq = max(read_seq, min(?, next_seq - 1)) WHERE id = ?", seq, roomID)
		if err != nil {
			return fmt.Errorf("node: mark read: %w", err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return problem.NotFound("There is no room %q.", roomID)
		}
		return t.Emit(KindRoom, roomID, RoomChanged{ID: roomID, Change: "read"})
	})
}

// DeleteMessage deletes one of the person's own messages: its text goes, a deleted line stays.
func (s *Service) DeleteMessage(ctx context.Context, id string) error {
	return s.cfg.Writer.Exec(ctx, func(t *ledger.Tx) error {
		m, err := s.messageIn(t.Context(), t, id)
		if err != nil {
			return err
		}
		if m.Author != AuthorPerson {
			return problem.New(problem.KindForbidden, "Only your own messages can be deleted.")
		}
		if m.Deleted {
			return ledger.ErrNoChange
		}
		m.Body, m.Deleted, m.Data = "", true, json.RawMessage("{}")
		return s.updateMessageTx(t, m)
	})
}

// Search finds messages containing every word of q, across the rooms or in one, newest first.
func (s *Service) Search(ctx context.Context, q, roomID string, limit int) ([]Message, error) {
	words := strings.Fields(strings.ToLower(q))
	if len(words) == 0 {
		return nil, problem.Invalid("Say what to search for.")
	}
	if len(words) > 12 || len(q) > 200 {
		return nil, problem.Invalid("A search is at most 12 words and 200 characters.")
	}
	if limit <= 0 || limit > 100 {
		limit = 50
	}
	where, args := "WHERE deleted = 0", []any{}
	for _, w := range words {
		where += " AND instr(lower(body), ?) > 0"
		args = append(args, w)
	}
	if roomID != "" {
		where += " AND room_id = ?"
		args = append(args, roomID)
	}
	return s.queryMessages(ctx, s.cfg.Store.Reader(), where+" ORDER BY created_at DESC LIMIT ?", append(args, limit)...)
}

// Export is the room as Markdown: every message, with who wrote it and when.
func (s *Service) Export(ctx context.Context, roomID string) (string, error) {
	r, err := s.Room(ctx, roomID)
	if err != nil {
		return "", err
	}
	ms, err := s.queryMessages(ctx, s.cfg.Store.Reader(), "WHERE room_id = ? ORDER BY seq", roomID)
	if err != nil {
		return "", err
	}
	names := map[string]string{}
	for _, m := range r.Members {
		names[m.NodeID] = m.Name
	}
	var b strings.Builder
	fmt.Fprintf(&b, "# %s\n\n", r.Title)
	for _, m := range ms {
		who := "You"
		switch m.Author {
		case AuthorNode:
			who = names[m.NodeID]
			if who == "" {
				who = "A node"
			}
		case AuthorSystem:
			who = "Ensemble"
		}
		body := m.Body
		if m.Deleted {
			body = "_(deleted)_"
		}
		private := ""
		if m.Private {
			private = " (only me)"
		}
		fmt.Fprintf(&b, "**%s**%s · %s\n\n%s\n\n", who, private, m.CreatedAt.Local().Format("2 Jan 2006 15:04"), body)
	}
	return b.String(), nil
}
