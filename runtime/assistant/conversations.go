package assistant

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/ensemblework/ensemble/runtime/events"
	"github.com/ensemblework/ensemble/runtime/ledger"
	"github.com/ensemblework/ensemble/runtime/models"
	"github.com/ensemblework/ensemble/runtime/problem"
	"github.com/ensemblework/ensemble/runtime/skills"
	"github.com/ensemblework/ensemble/runtime/store"
)

// KindConversation is the event published when a conversation is created, gets a message or is
// deleted. Its data is a [ConversationChange]: clients read the conversation again.
const KindConversation events.Kind = "assistant.conversation"

// KindSettings is the event published when the assistant's settings change; its data is the
// [Settings] as they now are.
const KindSettings events.Kind = "assistant.settings"

// EventSpecs lists the assistant's kinds of event, for the catalog.
func EventSpecs() []events.Spec {
	return []events.Spec{
		{Kind: KindConversation, Payload: ConversationChange{}},
		{Kind: skills.KindSkill, Payload: skills.Change{}}, // kept by runtime/skills, in the assistant's family
		{Kind: KindSettings, Payload: Settings{}},
	}
}

// ConversationChange is the data of a [KindConversation] event. It carries no text: the event log
// outlives a deleted conversation.
type ConversationChange struct {
	ID string `json:"id"`
	// Change is "created", "message" or "deleted".
	Change string `json:"change"`
}

// Summary is a conversation in the list of recent chats.
type Summary struct {
	ID        string    `json:"id"`
	Title     string    `json:"title"`
	UpdatedAt time.Time `json:"updatedAt"`
	Messages  int       `json:"messages"`
	Busy      bool      `json:"busy"`
}

// Conversation is one conversation with its messages, oldest first.
type Conversation struct {
	ID        string    `json:"id"`
	Title     string    `json:"title"`
	UpdatedAt time.Time `json:"updatedAt"`
	Busy      bool      `json:"busy"`
	Messages  []Message `json:"messages"`
}

// Message is one saved message. An error message's text ends with the sentence that says what went
// wrong; a stopped one holds what was streamed before Stop. A cut-off one is an error message
// whose model stream broke off: its text is what arrived, then the sentence saying so.
type Message struct {
	ID      string    `json:"id"`
	Role    string    `json:"role"` // "user" or "assistant"
	Text    string    `json:"text"`
	Error   bool      `json:"error,omitempty"`
	Stopped bool      `json:"stopped,omitempty"`
	CutOff  bool      `json:"cutOff,omitempty"`
	Tools   []ToolRow `json:"tools,omitempty"`
	At      time.Time `json:"at"`

	history string // what the model is sent in later turns, when it differs from Text
}

// errNoConversation is an unknown conversation.
var errNoConversation = problem.NotFound("There is no such conversation; it may have been deleted.")

// titleLength is the most characters of the first message a conversation's title keeps.
const titleLength = 80

// titleOf is a conversation's title: its first message on one line, at most titleLength characters.
func titleOf(text string) string {
	t := strings.Join(strings.Fields(text), " ")
	if utf8.RuneCountInString(t) <= titleLength {
		return t
	}
	r := []rune(t)
	return strings.TrimSpace(string(r[:titleLength-1])) + "…"
}

// historyWindow is how many of a conversation's newest messages are read to build a turn's
// history: more than HistoryMessages, since error turns are skipped.
const historyWindow = 100

// open starts a turn: it creates the conversation (id new) or checks it exists, saves the person's
// message, and returns the history the model is sent, read before that message was added.
func (s *Service) open(ctx context.Context, id string, isNew bool, text string, a *Agent) ([]models.Message, error) {
	var hist []models.Message
	err := s.cfg.Writer.Exec(ctx, func(t *ledger.Tx) error {
		now := store.Stamp(t.Now())
		change := "message"
		if isNew {
			change = "created"
			startedOn := "hub"
			if a != nil {
				startedOn = "node"
			}
			if _, err := t.ExecContext(t.Context(), `INSERT INTO assistant_conversations (id, title, created_at, updated_at, started_on, actor)
				VALUES (?, ?, ?, ?, ?, ?)`, id, titleOf(text), now, now, startedOn, actorJSON(a)); err != nil {
				return fmt.Errorf("assistant: create conversation: %w", err)
			}
		} else {
			res, err := t.ExecContext(t.Context(), "UPDATE assistant_conversations SET updated_at = ? WHERE id = ?", now, id)
			if err != nil {
				return fmt.Errorf("assistant: open conversation %s: %w", id, err)
			}
			if n, _ := res.RowsAffected(); n == 0 {
				return errNoConversation
			}
			msgs, err := readMessages(t.Context(), t, id, historyWindow)
			if err != nil {
				return err
			}
			hist = historyOf(msgs)
		}
		if err := insertMessage(t, id, Message{Role: "user", Text: text}); err != nil {
			return err
		}
		return t.Emit(KindConversation, id, ConversationChange{ID: id, Change: change})
	})
	return hist, err
}

// save writes the assistant's message that ends a turn. It runs even when the turn's context was
// cancelled (Stop, a client gone), so what was streamed is kept.
func (s *Service) save(ctx context.Context, id string, m Message) (string, error) {
	ctx = context.WithoutCancel(ctx)
	m.ID = ledger.NewID("msg_")
	err := s.cfg.Writer.Exec(ctx, func(t *ledger.Tx) error {
		if _, err := t.ExecContext(t.Context(), "UPDATE assistant_conversations SET updated_at = ? WHERE id = ?",
			store.Stamp(t.Now()), id); err != nil {
			return fmt.Errorf("assistant: save reply in %s: %w", id, err)
		}
		if err := insertMessage(t, id, m); err != nil {
			return err
		}
		return t.Emit(KindConversation, id, ConversationChange{ID: id, Change: "message"})
	})
	return m.ID, err
}

func insertMessage(t *ledger.Tx, convID string, m Message) error {
	if m.ID == "" {
		m.ID = ledger.NewID("msg_")
	}
	tools := []byte("[]")
	if len(m.Tools) > 0 {
		var err error
		if tools, err = json.Marshal(m.Tools); err != nil {
			return fmt.Errorf("assistant: encode tool rows: %w", err)
		}
	}
	_, err := t.ExecContext(t.Context(), `INSERT INTO assistant_messages
		(id, conversation_id, seq, role, text, history, error, stopped, cut_off, tools, created_at)
		VALUES (?, ?, (SELECT coalesce(max(seq), 0) + 1 FROM assistant_messages WHERE conversation_id = ?), ?, ?, ?, ?, ?, ?, ?, ?)`,
		m.ID, convID, convID, m.Role, m.Text, m.history, m.Error, m.Stopped, m.CutOff, string(tools), store.Stamp(t.Now()))
	if err != nil {
		return fmt.Errorf("assistant: save message in %s: %w", convID, err)
	}
	return nil
}

// querier is a read pool or a write transaction.
type querier interface {
	QueryContext(ctx context.Context, q string, args ...any) (*sql.Rows, error)
}

// readMessages returns a conversation's newest limit messages (0: all), oldest first.
func readMessages(ctx context.Context, db querier, id string, limit int) ([]Message, error) {
	if limit <= 0 {
		limit = -1 // SQLite: no limit
	}
	rows, err := db.QueryContext(ctx, `SELECT id, role, text, history, error, stopped, cut_off, tools, created_at FROM (
		SELECT * FROM assistant_messages WHERE conversation_id = ? ORDER BY seq DESC LIMIT ?) ORDER BY seq`, id, limit)
	if err != nil {
		return nil, fmt.Errorf("assistant: read messages of %s: %w", id, err)
	}
	defer rows.Close()
	var out []Message
	for rows.Next() {
		var (
			m         Message
			tools, at string
		)
		if err := rows.Scan(&m.ID, &m.Role, &m.Text, &m.history, &m.Error, &m.Stopped, &m.CutOff, &tools, &at); err != nil {
			return nil, fmt.Errorf("assistant: read messages of %s: %w", id, err)
		}
		if err := json.Unmarshal([]byte(tools), &m.Tools); err != nil {
			return nil, fmt.Errorf("assistant: read tool rows of %s: %w", m.ID, err)
		}
		m.At = store.ReadTime(at)
		out = append(out, m)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("assistant: read messages of %s: %w", id, err)
	}
	return out, nil
}

// historyOf is what a turn sends the model of the messages before it: error messages (and a stopped
// reply with no text) are skipped, but not a cut-off reply, whose history says it was cut off; roles
// alternate starting with the person, the last message is the assistant's, and at most
// HistoryMessages are kept.
func historyOf(msgs []Message) []models.Message {
	var hist []models.Message
	for _, m := range msgs {
		if m.Error && !m.CutOff || m.Stopped && strings.TrimSpace(m.Text) == "" && m.history == "" {
			continue
		}
		text := m.Text
		if m.history != "" {
			text = m.history
		}
		hist = append(hist, models.Message{Role: m.Role, Text: text})
	}
	// A skipped reply leaves a question without an answer; drop it so roles alternate.
	var clean []models.Message
	for i, m := range hist {
		if m.Role == "user" && i+1 < len(hist) && hist[i+1].Role == "user" {
			continue
		}
		clean = append(clean, m)
	}
	if len(clean) > 0 && clean[len(clean)-1].Role == "user" {
		clean = clean[:len(clean)-1]
	}
	if len(clean) > HistoryMessages {
		clean = clean[len(clean)-HistoryMessages:]
	}
	for len(clean) > 0 && clean[0].Role != "user" {
		clean = clean[1:]
	}
	return clean
}

// List returns up to limit conversations (50 when limit is 0), the most recently changed first.
func (s *Service) List(ctx context.Context, limit int) ([]Summary, error) {
	if limit <= 0 {
		limit = 50
	}
	rows, err := s.cfg.Store.Reader().QueryContext(ctx, `SELECT c.id, c.title, c.updated_at,
		(SELECT count(*) FROM assistant_messages m WHERE m.conversation_id = c.id)
		FROM assistant_conversations c WHERE c.started_on = 'hub' ORDER BY c.updated_at DESC, c.rowid DESC LIMIT ?`, limit)
	if err != nil {
		return nil, fmt.Errorf("assistant: list conversations: %w", err)
	}
	defer rows.Close()
	out := []Summary{}
	for rows.Next() {
		var (
			c  Summary
			at string
		)
		if err := rows.Scan(&c.ID, &c.Title, &at, &c.Messages); err != nil {
			return nil, fmt.Errorf("assistant: list conversations: %w", err)
		}
		c.UpdatedAt = store.ReadTime(at)
		c.Busy = s.Busy(c.ID)
		out = append(out, c)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("assistant: list conversations: %w", err)
	}
	return out, nil
}

// Conversation returns one conversation with every message, or a not-found problem.
func (s *Service) Conversation(ctx context.Context, id string) (Conversation, error) {
	db := s.cfg.Store.Reader()
	c := Conversation{ID: id}
	var at string
	err := db.QueryRowContext(ctx, "SELECT title, updated_at FROM assistant_conversations WHERE id = ?", id).Scan(&c.Title, &at)
	if errors.Is(err, sql.ErrNoRows) {
		return Conversation{}, errNoConversation
	}
	if err != nil {
		return Conversation{}, fmt.Errorf("assistant: read conversation %s: %w", id, err)
	}
	c.UpdatedAt = store.ReadTime(at)
	c.Busy = s.Busy(id)
	if c.Messages, err = readMessages(ctx, db, id, 0); err != nil {
		return Conversation{}, err
	}
	if err := s.overlay(ctx, id, c.Messages); err != nil {
		return Conversation{}, err
	}
	if c.Messages == nil {
		c.Messages = []Message{}
	}
	return c, nil
}

// Delete stops the conversation's running turn, if any, then deletes it with its messages.
func (s *Service) Delete(ctx context.Context, id string) error {
	if err := s.Stop(ctx, id); err != nil {
		if !problem.Is(err, problem.KindConflict) {
			return err
		}
	}
	err := s.cfg.Writer.Exec(ctx, func(t *ledger.Tx) error {
		res, err := t.ExecContext(t.Context(), "DELETE FROM assistant_conversations WHERE id = ?", id)
		if err != nil {
			return fmt.Errorf("assistant: delete conversation %s: %w", id, err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return errNoConversation
		}
		return t.Emit(KindConversation, id, ConversationChange{ID: id, Change: "deleted"})
	})
	if err == nil && s.cfg.PlanDir != "" && strings.HasPrefix(id, "cnv_") && !strings.ContainsAny(id, `/\.`) {
		// The folder its plan's agent worked in goes with it.
		if rerr := os.RemoveAll(filepath.Join(s.cfg.PlanDir, id)); rerr != nil {
			s.cfg.Log.Warn("assistant: a deleted conversation's folder stays", "err", rerr)
		}
	}
	return err
}

// exists reports whether a conversation is saved.
func (s *Service) exists(ctx context.Context, id string) (bool, error) {
	var n int
	err := s.cfg.Store.Reader().QueryRowContext(ctx, "SELECT count(*) FROM assistant_conversations WHERE id = ?", id).Scan(&n)
	if err != nil {
		return false, fmt.Errorf("assistant: find conversation %s: %w", id, err)
	}
	return n > 0, nil
}
