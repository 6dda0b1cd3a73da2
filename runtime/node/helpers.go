package node

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/ensemblework/ensemble/runtime/ledger"
	"github.com/ensemblework/ensemble/runtime/problem"
	"github.com/ensemblework/ensemble/runtime/store"
	"github.com/ensemblework/ensemble/runtime/tools"
)

// Helpers (spec 002 §6.1): a temporary node a node brings in for one side task. It has its
// parent's model at low effort, the task as its charter, and a task room with its parent that the
// owner reads but does not write in. It reads only, unless its parent grants it its own agent
// sessions; it never gets more than its parent. Helpers brought in by one turn report together:
// the parent hears once, with every result.
const (
	ToolHelper = "node_helper"

	// HelpersWorking is how many helpers a node has working at once unless its owner changes it
	// (autonomy.helpers); the owner's nodes have twice that between them.
	HelpersWorking = 4
	// HelpersKept is how many finished helpers a node keeps for its owner to read.
	HelpersKept = 12
	// helperBusy is how recently a helper's room must have moved for it to count as working.
	helperBusy = 10 * time.Minute
	// helperQuiet is how long a task room stays quiet before it goes with its helper.
	helperQuiet = 72 * time.Hour
	// HelperSweep is how often quiet helpers are removed.
	HelperSweep = 10 * time.Minute
)

// Grants a helper may have.
const (
	CanRead     = "read"
	CanSessions = "sessions"
)

func init() { actingTools[ToolHelper] = true; ownerOnly[ToolHelper] = true }

type helperIn struct {
	Task string `json:"task" jsonschema:"the side task and what to report, at most 1,500 characters" check:"minLength=1,maxLength=1500"`
	Name string `json:"name,omitempty" jsonschema:"the helper's name" check:"maxLength=60"`
	Role string `json:"role,omitempty" jsonschema:"its role, such as researcher or reviewer" check:"maxLength=60"`
	Can  string `json:"can,omitempty" jsonschema:"read (default): it only reads; sessions: it may also run its own coding-agent session" check:"enum=read|sessions"`
}

func helperTool(def func(name, desc string) tools.Tool) tools.Tool {
	return tools.Define(def(ToolHelper, "Bring in a temporary helper for one side task (an independent second opinion, an audit, a parallel look-up). "+
		"It works in its own thread and you hear once, with every helper's result, in a later turn; do not wait or announce it."),
		tools.Typed[helperIn]{Run: func(ctx context.Context, tc *tools.ToolContext, in helperIn) (tools.Result, error) {
			c, err := turnOf(tc)
			if err != nil {
				return tools.Result{}, err
			}
			h, room, err := c.s.bringHelper(ctx, c, in)
			if err != nil {
				return tools.Result{}, err
			}
			return tools.Result{Summary: fmt.Sprintf("Brought in %s (@%s) for: %s", h.Name, h.Slug, oneLineOf(in.Task, 80)),
				Data: map[string]string{"helper": h.ID, "room": room, "note": "You hear its result in a later turn; reply to your owner now if they wait."}}, nil
		}})
}

// bringHelper makes the helper, its task room and its one work turn.
func (s *Service) bringHelper(ctx context.Context, c *turnCtx, in helperIn) (Node, string, error) {
	t, parent := c.rt.turn, c.node
	switch {
	case parent.ParentID != "":
		return Node{}, "", problem.Invalid("A helper cannot bring in helpers of its own; do the task, or report what is missing.")
	case !t.ByOwner:
		return Node{}, "", problem.Invalid("Only your owner's own request brings in a helper.")
	case in.Can == CanSessions && s.cfg.Jobs == nil:
		return Node{}, "", errNoJobs
	}
	can := cmp.Or(in.Can, CanRead)
	title := oneLineOf(in.Task, 60)
	var helperID, roomID string
	err := s.cfg.Writer.Exec(ctx, func(tx *ledger.Tx) error {
		if err := s.helperRoomTx(tx, parent); err != nil {
			return err
		}
		name := strings.TrimSpace(in.Name)
		if name == "" {
			name = parent.Name + "'s helper"
		}
		charter := fmt.Sprintf("You are a temporary helper @%s brought in for one side task. Do it, then answer with your result in full: it goes to @%s, not to people.\n\nThe task:\n%s",
			parent.Slug, parent.Slug, in.Task)
		var err error
		helperID, err = s.createTx(tx, NewNode{Name: name, Role: cmp.Or(strings.TrimSpace(in.Role), "helper"), Charter: charter,
			Provider: parent.Provider, Model: parent.Model}, parent.ID)
		if err != nil {
			return err
		}
		grant := parent.Autonomy
		grant.CreateNodes, grant.Helpers, grant.Can = "ask", 0, can
		if can == CanSessions && parent.Autonomy.ComputerWork == "ask" {
			grant.ComputerWork = "ask" // never more than its parent
		}
		auto, _ := json.Marshal(grant)
		if _, err := tx.ExecContext(tx.Context(), "UPDATE node_agents SET autonomy = ? WHERE id = ?", string(auto), helperID); err != nil {
			return fmt.Errorf("node: a helper's grant: %w", err)
		}
		if roomID, err = s.createRoomTx(tx, RoomTask, title, "", parent.ID, []string{parent.ID, helperID}); err != nil {
			return err
		}
		if _, err := s.insertMessageTx(tx, Message{RoomID: roomID, Author: AuthorNode, NodeID: parent.ID, Kind: KindText, Body: in.Task,
			Depth: t.Depth + 1, TurnID: t.ID}); err != nil {
			return err
		}
		return s.enqueueTx(tx, Turn{NodeID: helperID, RoomID: roomID, Lane: "work:" + roomID + ":" + helperID, Reason: ReasonDelegate,
			ByOwner: true, Depth: t.Depth + 1, OperationID: "helper:" + helperID, OriginID: t.ID, ConversationID: ledger.NewID("cnv_"),
			Note:     fmt.Sprintf("@%s brought you in for this side task:\n%s", parent.Slug, in.Task),
			ReportTo: &Report{NodeID: parent.ID, RoomID: c.room.ID, Lane: t.Lane, Private: t.Private, ByOwner: true, Depth: t.Depth, Title: title}})
	})
	if err != nil {
		return Node{}, "", err
	}
	s.wake()
	h, err := s.Node(ctx, helperID)
	return h, roomID, err
}

// helperRoomTx checks the limits before a helper is brought in, and lets the quietest finished
// helpers go past the number kept.
func (s *Service) helperRoomTx(tx *ledger.Tx, parent Node) error {
	ctx := tx.Context()
	limit := parent.Autonomy.Helpers
	if limit == 0 {
		limit = HelpersWorking
	}
	busy := store.Stamp(tx.Now().Add(-helperBusy))
	working := func(where string, args ...any) (int, error) {
		var n int
		err := tx.QueryRowContext(ctx, `SELECT count(*) FROM node_agents h WHERE h.parent_node_id IS NOT NULL AND `+where+` AND (
			EXISTS (SELECT 1 FROM node_turns t WHERE t.node_id = h.id AND t.status IN ('queued', 'running'))
			OR EXISTS (SELECT 1 FROM node_room_members m JOIN node_rooms r ON r.id = m.room_id
				WHERE m.node_id = h.id AND r.kind = 'task' AND r.updated_at > ?))`, append(args, busy)...).Scan(&n)
		return n, err
	}
	mine, err := working("h.parent_node_id = ?", parent.ID)
	if err != nil {
		return fmt.Errorf("node: count helpers: %w", err)
	}
	if mine >= limit {
		return problem.Conflict("You have %d helpers working, the most you may; wait for one to report.", mine)
	}
	all, err := working("1 = 1")
	if err != nil {
		return fmt.Errorf("node: count helpers: %w", err)
	}
	if all >= 2*max(limit, HelpersWorking) {
		return problem.Conflict("Your owner's nodes have %d helpers working, the most at once; wait for one to report.", all)
	}
	// The quietest finished helpers past the number kept go, with their rooms.
	_, err = tx.ExecContext(ctx, `DELETE FROM node_rooms WHERE kind = 'task' AND id IN (
		SELECT r.id FROM node_rooms r WHERE r.kind = 'task' AND r.lead_node_id = ? ORDER BY r.updated_at DESC LIMIT -1 OFFSET ?)`,
		parent.ID, HelpersKept-1)
	if err != nil {
		return fmt.Errorf("node: let old helpers go: %w", err)
	}
	return deleteRoomlessHelpersTx(tx)
}

// deleteRoomlessHelpersTx removes the helpers whose task room is gone.
func deleteRoomlessHelpersTx(tx *ledger.Tx) error {
	_, err := tx.ExecContext(tx.Context(), `DELETE FROM node_agents WHERE parent_node_id IS NOT NULL AND NOT EXISTS (
		SELECT 1 FROM node_room_members m JOIN node_rooms r ON r.id = m.room_id WHERE m.node_id = node_agents.id AND r.kind = 'task')`)
	if err != nil {
		return fmt.Errorf("node: remove helpers: %w", err)
	}
	return nil
}

// sweepHelpers removes the helpers whose task room has been quiet for three days, and those whose
// room was deleted.
func (s *Service) sweepHelpers(ctx context.Context) error {
	return s.cfg.Writer.Exec(ctx, func(tx *ledger.Tx) error {
		_, err := tx.ExecContext(tx.Context(), `DELETE FROM node_rooms WHERE kind = 'task' AND updated_at < ? AND NOT EXISTS (
			SELECT 1 FROM node_turns t WHERE t.room_id = node_rooms.id AND t.status IN ('queued', 'running'))`,
			store.Stamp(tx.Now().Add(-helperQuiet)))
		if err != nil {
			return fmt.Errorf("node: sweep helpers: %w", err)
		}
		return deleteRoomlessHelpersTx(tx)
	})
}

// helperResultTx posts a helper's result in its task room and, once every helper its parent's
// turn brought in has reported, wakes the parent once with all their results.
func (s *Service) helperResultTx(tx *ledger.Tx, t Turn, n Node, text string) error {
	if _, err := s.insertMessageTx(tx, Message{RoomID: t.RoomID, Author: AuthorNode, NodeID: n.ID, Kind: KindText, Body: text,
		Depth: t.Depth + 1, TurnID: t.ID}); err != nil {
		return err
	}
	return helpersReportTx(tx, t.OriginID, t.ID)
}

// helpersReportTx wakes the node whose turn origin brought in helpers, once, with every result:
// when that turn and all its helpers' turns but except have ended.
func helpersReportTx(tx *ledger.Tx, origin, except string) error {
	ctx := tx.Context()
	var helpers, pending int
	var report string
	if err := tx.QueryRowContext(ctx, `SELECT count(*), count(*) FILTER (WHERE id <> ? AND status IN ('queued', 'running')), coalesce(max(report_to), '')
		FROM node_turns WHERE origin_turn_id = ? AND operation_id LIKE 'helper:%'`, except, origin).Scan(&helpers, &pending, &report); err != nil {
		return fmt.Errorf("node: count a turn's helpers: %w", err)
	}
	if helpers == 0 || pending > 0 {
		return nil
	}
	var status string
	if err := tx.QueryRowContext(ctx, "SELECT status FROM node_turns WHERE id = ?", origin).Scan(&status); err == nil && (status == "queued" || status == "running") {
		return nil // the turn that brought them in reports once it has ended
	}
	var rp Report
	if err := json.Unmarshal([]byte(report), &rp); err != nil {
		return fmt.Errorf("node: a helper's report: %w", err)
	}
	rows, err := queryAll(ctx, tx, "read the helpers' results", `SELECT a.slug, coalesce((SELECT m.body FROM node_messages m
			WHERE m.turn_id = t.id AND m.author_node_id = t.node_id ORDER BY m.seq DESC LIMIT 1), '(it gave no answer)')
		FROM node_turns t JOIN node_agents a ON a.id = t.node_id WHERE t.origin_turn_id = ? AND t.operation_id LIKE 'helper:%' ORDER BY t.created_at, t.rowid`,
		[]any{origin}, func(sc scanner) (string, error) {
			var slug, body string
			err := sc.Scan(&slug, &body)
			return "@" + slug + ":\n" + body, err
		})
	if err != nil {
		return err
	}
	note := fmt.Sprintf("Your helpers reported:\n\n%s\n\nTell your owner what came of it, in one message.", strings.Join(rows, "\n\n"))
	return enqueueTurnTx(tx, Turn{NodeID: rp.NodeID, RoomID: rp.RoomID, Lane: rp.Lane, Private: rp.Private, Reason: ReasonReport,
		ByOwner: rp.ByOwner, Depth: rp.Depth, OperationID: "helpers:" + origin, Note: note})
}

// PromoteHelper keeps a helper as a lasting node (POST /api/node/nodes/{id}/promote): it leaves
// its parent, keeps its charter and memories, and gets its own DM; its task room stays as history.
func (s *Service) PromoteHelper(ctx context.Context, ref string) (Node, error) {
	h, err := s.Node(ctx, ref)
	if err != nil {
		return Node{}, err
	}
	if h.ParentID == "" {
		return Node{}, problem.Conflict("@%s is already one of your lasting nodes.", h.Slug)
	}
	err = s.cfg.Writer.Exec(ctx, func(tx *ledger.Tx) error {
		var count int
		if err := tx.QueryRowContext(tx.Context(), "SELECT count(*) FROM node_agents WHERE parent_node_id IS NULL").Scan(&count); err != nil {
			return err
		}
		if count >= MaxNodes {
			return problem.Conflict("You have %d nodes, the most there can be; delete one first.", MaxNodes)
		}
		name := h.Name
		if taken, err := nameTaken(tx, name, h.ID); err != nil {
			return err
		} else if taken {
			if name, err = freeName(tx, name); err != nil {
				return err
			}
		}
		a := h.Autonomy
		a.Can = ""
		auto, _ := json.Marshal(a)
		// The room it reported in stays as history: its members are kept, but the task room
		// no longer holds it up (deleteRoomlessHelpersTx looks at helpers only).
		if _, err := tx.ExecContext(tx.Context(), "UPDATE node_agents SET parent_node_id = NULL, name = ?, autonomy = ?, updated_at = ? WHERE id = ?",
			name, string(auto), store.Stamp(tx.Now()), h.ID); err != nil {
			return fmt.Errorf("node: promote a helper: %w", err)
		}
		if _, err := s.createRoomTx(tx, RoomDM, name, h.ID, "", []string{h.ID}); err != nil {
			return err
		}
		return tx.Emit(KindNode, h.ID, NodeChanged{ID: h.ID, Change: "promoted"})
	})
	if err != nil {
		return Node{}, err
	}
	return s.Node(ctx, h.ID)
}

// stopHelpers stops the turns and agent runs of a paused node's helpers.
func (s *Service) stopHelpers(ctx context.Context, parent string) {
	ids, err := queryAll(ctx, s.cfg.Store.Reader(), "read a node's helpers", "SELECT id FROM node_agents WHERE parent_node_id = ?",
		[]any{parent}, scanString)
	if err != nil {
		return
	}
	for _, id := range ids {
		s.stopNode(id)
		s.stopNodeRuns(ctx, id)
	}
}
