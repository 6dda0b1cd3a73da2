package node

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/ensemblework/ensemble/runtime/ledger"
	"github.com/ensemblework/ensemble/runtime/problem"
	"github.com/ensemblework/ensemble/runtime/store"
)

// Memory is a short fact a node keeps for its owner (node_remember).
type Memory struct {
	ID        string    `json:"id"`
	NodeID    string    `json:"nodeId"`
	Content   string    `json:"content"`
	CreatedAt time.Time `json:"createdAt"`
}

// Remember keeps a fact for a node; past the newest MaxMemories the oldest go.
func (s *Service) Remember(ctx context.Context, nodeRef, content string) (Memory, error) {
	content = strings.TrimSpace(content)
	if content == "" || len(content) > MaxMemoryLen {
		return Memory{}, problem.Invalid("A memory is 1 to %d characters.", MaxMemoryLen)
	}
	n, err := s.Node(ctx, nodeRef)
	if err != nil {
		return Memory{}, err
	}
	m := Memory{ID: ledger.NewID("mem_"), NodeID: n.ID, Content: content}
	err = s.cfg.Writer.Exec(ctx, func(t *ledger.Tx) error {
		m.CreatedAt = t.Now()
		if _, err := t.ExecContext(t.Context(), "INSERT INTO node_memories (id, node_id, content, created_at) VALUES (?, ?, ?, ?)",
			m.ID, n.ID, content, store.Stamp(m.CreatedAt)); err != nil {
			return fmt.Errorf("node: remember: %w", err)
		}
		_, err := t.ExecContext(t.Context(), `DELETE FROM node_memories WHERE node_id = ? AND id NOT IN
			(SELECT id FROM node_memories WHERE node_id = ? ORDER BY created_at DESC, rowid DESC LIMIT ?)`, n.ID, n.ID, MaxMemories)
		if err != nil {
			return fmt.Errorf("node: forget the oldest memories: %w", err)
		}
		return t.Emit(KindNode, n.ID, NodeChanged{ID: n.ID, Change: "memory"})
	})
	return m, err
}

// Memories lists a node's memory, newest first.
func (s *Service) Memories(ctx context.Context, nodeRef string) ([]Memory, error) {
	n, err := s.Node(ctx, nodeRef)
	if err != nil {
		return nil, err
	}
	return s.memories(ctx, n.ID, MaxMemories)
}

func (s *Service) memories(ctx context.Context, nodeID string, limit int) ([]Memory, error) {
	rows, err := s.cfg.Store.Reader().QueryContext(ctx, "SELECT id, content, created_at FROM node_memories WHERE node_id = ? ORDER BY created_at DESC, rowid DESC LIMIT ?", nodeID, limit)
	if err != nil {
		return nil, fmt.Errorf("node: read memory: %w", err)
	}
	defer rows.Close()
	out := []Memory{}
	for rows.Next() {
		m := Memory{NodeID: nodeID}
		var at string
		if err := rows.Scan(&m.ID, &m.Content, &at); err != nil {
			return nil, fmt.Errorf("node: read memory: %w", err)
		}
		m.CreatedAt = store.ReadTime(at)
		out = append(out, m)
	}
	return out, rows.Err()
}

// Forget deletes one memory of a node.
func (s *Service) Forget(ctx context.Context, nodeRef, memoryID string) error {
	n, err := s.Node(ctx, nodeRef)
	if err != nil {
		return err
	}
	return s.cfg.Writer.Exec(ctx, func(t *ledger.Tx) error {
		res, err := t.ExecContext(t.Context(), "DELETE FROM node_memories WHERE id = ? AND node_id = ?", memoryID, n.ID)
		if err != nil {
			return fmt.Errorf("node: forget: %w", err)
		}
		if k, _ := res.RowsAffected(); k == 0 {
			return problem.NotFound("%s has no memory %q.", n.Name, memoryID)
		}
		return t.Emit(KindNode, n.ID, NodeChanged{ID: n.ID, Change: "memory"})
	})
}

// memoryBlock is the persona's memory section: the newest facts, within a budget.
func (s *Service) memoryBlock(ctx context.Context, nodeID string) string {
	ms, err := s.memories(ctx, nodeID, MaxMemories)
	if err != nil || len(ms) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("What your owner asked you to remember (newest first; follow it):\n")
	for _, m := range ms {
		line := "- " + m.Content + "\n"
		if b.Len()+len(line) > 2400 {
			break
		}
		b.WriteString(line)
	}
	return b.String()
}
