package node

import (
	"context"
	"fmt"
	"strings"

	"github.com/ensemblework/ensemble/runtime/ledger"
	"github.com/ensemblework/ensemble/runtime/store"
)

// stopCommand reports whether body is only a stop: "stop" (this room) or "stop all" / "stop
// everything" (every room).
func stopCommand(body string) (scope string, ok bool) {
	b := strings.ToLower(strings.Trim(strings.TrimSpace(body), ".! "))
	switch b {
	case "stop", "stop it", "stop now":
		return "room", true
	case "stop all", "stop everything", "stop all work":
		return "all", true
	}
	return "", false
}

// Stop stops the nodes' work in a room, or everywhere, without a model (spec 002 §6.4): the
// replies in progress, the turns queued, the plans made there and the agent runs started there.
// The owner gets one private status line.
func (s *Service) Stop(ctx context.Context, roomID, scope string) (Message, error) {
	if _, err := s.Room(ctx, roomID); err != nil {
		return Message{}, err
	}
	return s.stop(ctx, roomID, scope, nil)
}

func (s *Service) stopFromChat(ctx context.Context, roomID string, p Post, scope string) (Message, error) {
	if _, err := s.Room(ctx, roomID); err != nil {
		return Message{}, err
	}
	return s.stop(ctx, roomID, scope, &p)
}

func (s *Service) stop(ctx context.Context, roomID, scope string, p *Post) (Message, error) {
	match := func(t Turn) bool { return scope == "all" || t.RoomID == roomID }
	running := s.stopRunning(match)
	var queued int
	if scope == "all" {
		queued = s.dropQueued("1 = 1")
	} else {
		queued = s.dropQueued("room_id = ?", roomID)
	}
	plans, runs := s.stopWork(ctx, roomID, scope)
	var first Message
	err := s.cfg.Writer.Exec(ctx, func(t *ledger.Tx) error {
		if p != nil {
			m, err := s.insertMessageTx(t, Message{RoomID: roomID, Author: AuthorPerson, Kind: KindText, Body: p.Body, Private: p.Private, ClientID: p.ClientID})
			if err != nil {
				return err
			}
			first = m
		}
		line := stoppedLine(running, queued, plans, runs)
		m, err := s.insertMessageTx(t, Message{RoomID: roomID, Author: AuthorSystem, Kind: KindStatusLn, Body: line, Private: true})
		if p == nil {
			first = m
		}
		return err
	})
	return first, err
}

func stoppedLine(running, queued, plans, runs int) string {
	if running+queued+plans+runs == 0 {
		return "Nothing was running here, so there was nothing to stop."
	}
	var parts []string
	if plans > 0 {
		parts = append(parts, plural(plans, "plan", "plans"))
	}
	if runs > 0 {
		parts = append(parts, plural(runs, "agent run", "agent runs"))
	}
	if running > 0 {
		parts = append(parts, plural(running, "reply in progress", "replies in progress"))
	}
	if queued > 0 {
		parts = append(parts, plural(queued, "queued turn", "queued turns"))
	}
	if len(parts) > 1 {
		parts = []string{strings.Join(parts[:len(parts)-1], ", "), parts[len(parts)-1]}
	}
	return "Stopped " + strings.Join(parts, " and ") + ". What was already done stays."
}

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

// pausedTx posts, in the node's DM, what pausing it stopped (spec 002 §8.5).
func (s *Service) pausedTx(t *ledger.Tx, n Node) error {
	var running, queued int
	t.QueryRowContext(t.Context(), "SELECT count(*) FILTER (WHERE status = 'running'), count(*) FILTER (WHERE status = 'queued') FROM node_turns WHERE node_id = ?", n.ID).Scan(&running, &queued)
	line := "Paused. Nothing was running."
	if running+queued > 0 {
		line = "Paused: " + strings.TrimPrefix(stoppedLine(running, queued, 0, 0), "Stopped ")
	}
	runs, dropped, err := s.pauseRunsTx(t, n.ID)
	if err != nil {
		return err
	}
	if len(runs) > 0 || dropped > 0 {
		if running+queued == 0 {
			line = "Paused."
		}
		if len(runs) > 0 {
			line += fmt.Sprintf(" Stopped %s in your coding agent: %s.", plural(len(runs), "run", "runs"), strings.Join(runs, ", "))
		}
		if dropped > 0 {
			line += fmt.Sprintf(" Took %s out of its sessions' queues.", plural(dropped, "queued message", "queued messages"))
		}
	}
	// Its helpers' turns stop with it.
	if _, err := t.ExecContext(t.Context(), `UPDATE node_turns SET status = 'stopped', ended_at = ? WHERE status = 'queued'
		AND (node_id = ? OR node_id IN (SELECT id FROM node_agents WHERE parent_node_id = ?))`,
		store.Stamp(t.Now()), n.ID, n.ID); err != nil {
		return err
	}
	line += " Write to me to resume."
	if n.DMRoomID == "" {
		return nil
	}
	_, err = s.insertMessageTx(t, Message{RoomID: n.DMRoomID, Author: AuthorNode, NodeID: n.ID, Kind: KindStatusLn, Body: line})
	return err
}
