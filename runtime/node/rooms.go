package node

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/ensemblework/ensemble/runtime/ledger"
	"github.com/ensemblework/ensemble/runtime/problem"
	"github.com/ensemblework/ensemble/runtime/store"
)

// Room is a DM, a crew or a helper's task room.
type Room struct {
	ID       string       `json:"id"`
	Kind     RoomKind     `json:"kind"`
	Title    string       `json:"title"`
	DMNodeID string       `json:"dmNodeId,omitempty"`
	LeadID   string       `json:"leadNodeId,omitempty"`
	Members  []RoomMember `json:"members"`
	ReadSeq  int64        `json:"readSeq"`
	LastSeq  int64        `json:"lastSeq"`
	Unread   int          `json:"unread"`
	Last     *Message     `json:"last,omitempty"`
	// Lead is who answers the person in a crew: the set lead while a member, else its manager,
	// else its first node.
	Lead      string    `json:"lead,omitempty"`
	CreatedAt time.Time `json:"createdAt"`
	UpdatedAt time.Time `json:"updatedAt"`
}

// RoomMember is a node in a room, by its public fields.
type RoomMember struct {
	NodeID string `json:"nodeId"`
	Name   string `json:"name"`
	Slug   string `json:"slug"`
	Role   string `json:"role"`
	Avatar Avatar `json:"avatar"`
	Status string `json:"status"`
}

// NewCrew is a crew the person makes from nodes they have.
type NewCrew struct {
	Title      string   `json:"title"`
	NodeIDs    []string `json:"nodeIds"`
	LeadNodeID string   `json:"leadNodeId,omitempty"`
}

// RoomChange renames a crew or sets its lead.
type RoomChange struct {
	Title      *string `json:"title,omitempty"`
	LeadNodeID *string `json:"leadNodeId,omitempty"`
}

func (s *Service) createRoomTx(t *ledger.Tx, kind RoomKind, title, dmNode, lead string, nodes []string) (string, error) {
	id := ledger.NewID("room_")
	now := store.Stamp(t.Now())
	_, err := t.ExecContext(t.Context(), `INSERT INTO node_rooms (id, kind, title, dm_node_id, lead_node_id, created_at, updated_at)
		VALUES (?, ?, ?, ?, ?, ?, ?)`, id, string(kind), title, nullable(dmNode), nullable(lead), now, now)
	if err != nil {
		return "", fmt.Errorf("node: create room: %w", err)
	}
	for _, n := range nodes {
		if err := addMemberTx(t, id, n); err != nil {
			return "", err
		}
	}
	return id, t.Emit(KindRoom, id, RoomChanged{ID: id, Change: "created"})
}

func addMemberTx(t *ledger.Tx, room, node string) error {
	// A node added starts at the room's newest message: joining hands over no earlier talk.
	_, err := t.ExecContext(t.Context(), `INSERT INTO node_room_members (room_id, node_id, seen_seq, private_seen_seq, joined_at)
		SELECT ?, ?, next_seq - 1, next_seq - 1, ? FROM node_rooms WHERE id = ?
		ON CONFLICT DO NOTHING`, room, node, store.Stamp(t.Now()), room)
	if err != nil {
		return fmt.Errorf("node: add a node to a room: %w", err)
	}
	return nil
}

func nullable(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// CreateCrew makes a crew of the person's nodes (spec 002 §3).
func (s *Service) CreateCrew(ctx context.Context, in NewCrew) (Room, error) {
	var id string
	err := s.cfg.Writer.Exec(ctx, func(t *ledger.Tx) error {
		var err error
		id, err = s.createCrewTx(t, in)
		return err
	})
	if err != nil {
		return Room{}, err
	}
	return s.Room(ctx, id)
}

func (s *Service) createCrewTx(t *ledger.Tx, in NewCrew) (string, error) {
	title := strings.TrimSpace(in.Title)
	if title == "" || len(title) > MaxNameLen {
		return "", problem.Invalid("A crew's title is 1 to %d characters.", MaxNameLen)
	}
	if taken, err := crewTitleTaken(t, title, ""); err != nil {
		return "", err
	} else if taken {
		return "", problem.New(problem.KindConflict, fmt.Sprintf("You already have a crew called %s. Pick another title.", title))
	}
	if len(in.NodeIDs) == 0 || len(in.NodeIDs) > MaxCrewNodes {
		return "", problem.Invalid("A crew has 1 to %d nodes.", MaxCrewNodes)
	}
	var ids []string
	for _, ref := range in.NodeIDs {
		n, err := s.nodeIn(t.Context(), t, ref)
		if err != nil {
			return "", err
		}
		if n.ParentID != "" {
			return "", problem.Invalid("%s is a helper; a helper cannot join a crew.", n.Name)
		}
		if !slices.Contains(ids, n.ID) {
			ids = append(ids, n.ID)
		}
	}
	lead := ""
	if in.LeadNodeID != "" {
		n, err := s.nodeIn(t.Context(), t, in.LeadNodeID)
		if err != nil {
			return "", err
		}
		if !slices.Contains(ids, n.ID) {
			return "", problem.Invalid("The lead must be one of the crew's nodes; %s is not.", n.Name)
		}
		lead = n.ID
	}
	return s.createRoomTx(t, RoomCrew, title, "", lead, ids)
}

func crewTitleTaken(t *ledger.Tx, title, except string) (bool, error) {
	var n int
	err := t.QueryRowContext(t.Context(), "SELECT count(*) FROM node_rooms WHERE kind = 'crew' AND lower(title) = lower(?) AND id <> ?", title, except).Scan(&n)
	if err != nil {
		return false, fmt.Errorf("node: check a crew's title: %w", err)
	}
	return n > 0, nil
}

const roomCols = `r.id, r.kind, r.title, coalesce(r.dm_node_id, ''), coalesce(r.lead_node_id, ''), r.read_seq, r.next_seq - 1, r.created_at, r.updated_at,
	(SELECT count(*) FROM node_messages m WHERE m.room_id = r.id AND m.seq > r.read_seq AND m.author <> 'person' AND m.deleted = 0)`

func scanRoom(sc scanner) (Room, error) {
	var r Room
	var kind, created, updated string
	if err := sc.Scan(&r.ID, &kind, &r.Title, &r.DMNodeID, &r.LeadID, &r.ReadSeq, &r.LastSeq, &created, &updated, &r.Unread); err != nil {
		return Room{}, err
	}
	r.Kind = RoomKind(kind)
	r.CreatedAt, r.UpdatedAt = store.ReadTime(created), store.ReadTime(updated)
	return r, nil
}

// Rooms lists the person's rooms, the most recently active first, each with its nodes and last
// message.
func (s *Service) Rooms(ctx context.Context) ([]Room, error) {
	db := s.cfg.Store.Reader()
	rows, err := db.QueryContext(ctx, "SELECT "+roomCols+" FROM node_rooms r ORDER BY r.updated_at DESC, r.rowid DESC")
	if err != nil {
		return nil, fmt.Errorf("node: list rooms: %w", err)
	}
	var out []Room
	for rows.Next() {
		r, err := scanRoom(rows)
		if err != nil {
			rows.Close()
			return nil, fmt.Errorf("node: list rooms: %w", err)
		}
		out = append(out, r)
	}
	rows.Close()
	members, err := s.allMembers(ctx, db)
	if err != nil {
		return nil, err
	}
	for i := range out {
		out[i].Members = members[out[i].ID]
		out[i].Lead = leadOf(out[i])
		if m, err := s.lastMessage(ctx, db, out[i].ID); err == nil {
			out[i].Last = m
		}
	}
	if out == nil {
		out = []Room{}
	}
	return out, nil
}

// Room returns one room with its nodes, or a not-found problem.
func (s *Service) Room(ctx context.Context, id string) (Room, error) {
	return s.roomIn(ctx, s.cfg.Store.Reader(), id)
}

func (s *Service) roomIn(ctx context.Context, db querier, id string) (Room, error) {
	r, err := scanRoom(db.QueryRowContext(ctx, "SELECT "+roomCols+" FROM node_rooms r WHERE r.id = ?", id))
	if errors.Is(err, sql.ErrNoRows) {
		return Room{}, problem.NotFound("There is no room %q.", id)
	}
	if err != nil {
		return Room{}, fmt.Errorf("node: read room %s: %w", id, err)
	}
	members, err := s.membersOf(ctx, db, "WHERE rm.room_id = ?", id)
	if err != nil {
		return Room{}, err
	}
	r.Members = members[id]
	r.Lead = leadOf(r)
	r.Last, _ = s.lastMessage(ctx, db, id)
	return r, nil
}

func (s *Service) allMembers(ctx context.Context, db querier) (map[string][]RoomMember, error) {
	return s.membersOf(ctx, db, "")
}

func (s *Service) membersOf(ctx context.Context, db querier, where string, args ...any) (map[string][]RoomMember, error) {
	rows, err := db.QueryContext(ctx, `SELECT rm.room_id, n.id, n.name, n.slug, n.role, n.avatar, n.status
		FROM node_room_members rm JOIN node_agents n ON n.id = rm.node_id `+where+` ORDER BY rm.joined_at, rm.rowid`, args...)
	if err != nil {
		return nil, fmt.Errorf("node: read a room's nodes: %w", err)
	}
	defer rows.Close()
	out := map[string][]RoomMember{}
	for rows.Next() {
		var room, avatar string
		var m RoomMember
		if err := rows.Scan(&room, &m.NodeID, &m.Name, &m.Slug, &m.Role, &avatar, &m.Status); err != nil {
			return nil, fmt.Errorf("node: read a room's nodes: %w", err)
		}
		json.Unmarshal([]byte(avatar), &m.Avatar)
		out[room] = append(out[room], m)
	}
	return out, rows.Err()
}

// leadOf is who answers the person in a crew: the set lead while a member, else its manager, else
// its first node.
func leadOf(r Room) string {
	if r.Kind != RoomCrew {
		return ""
	}
	for _, m := range r.Members {
		if m.NodeID == r.LeadID {
			return m.NodeID
		}
	}
	for _, m := range r.Members {
		if m.Role == "manager" {
			return m.NodeID
		}
	}
	if len(r.Members) > 0 {
		return r.Members[0].NodeID
	}
	return ""
}

// UpdateRoom renames a crew or sets its lead.
func (s *Service) UpdateRoom(ctx context.Context, id string, c RoomChange) (Room, error) {
	r, err := s.Room(ctx, id)
	if err != nil {
		return Room{}, err
	}
	if r.Kind != RoomCrew {
		return Room{}, problem.Invalid("Only a crew is renamed or led here; a DM follows its node's name.")
	}
	err = s.cfg.Writer.Exec(ctx, func(t *ledger.Tx) error {
		if c.Title != nil {
			title := strings.TrimSpace(*c.Title)
			if title == "" || len(title) > MaxNameLen {
				return problem.Invalid("A crew's title is 1 to %d characters.", MaxNameLen)
			}
			if taken, err := crewTitleTaken(t, title, id); err != nil {
				return err
			} else if taken {
				return problem.New(problem.KindConflict, fmt.Sprintf("You already have a crew called %s. Pick another title.", title))
			}
			if _, err := t.ExecContext(t.Context(), "UPDATE node_rooms SET title = ? WHERE id = ?", title, id); err != nil {
				return fmt.Errorf("node: rename crew: %w", err)
			}
		}
		if c.LeadNodeID != nil {
			lead := ""
			if *c.LeadNodeID != "" {
				n, err := s.nodeIn(t.Context(), t, *c.LeadNodeID)
				if err != nil {
					return err
				}
				if !slices.ContainsFunc(r.Members, func(m RoomMember) bool { return m.NodeID == n.ID }) {
					return problem.Invalid("The lead must be one of the crew's nodes; %s is not.", n.Name)
				}
				lead = n.ID
			}
			if _, err := t.ExecContext(t.Context(), "UPDATE node_rooms SET lead_node_id = ? WHERE id = ?", nullable(lead), id); err != nil {
				return fmt.Errorf("node: set crew lead: %w", err)
			}
		}
		return t.Emit(KindRoom, id, RoomChanged{ID: id, Change: "updated"})
	})
	if err != nil {
		return Room{}, err
	}
	return s.Room(ctx, id)
}

// AddToCrew adds one of the person's nodes to a crew.
func (s *Service) AddToCrew(ctx context.Context, roomID, nodeRef string) (Room, error) {
	err := s.cfg.Writer.Exec(ctx, func(t *ledger.Tx) error { return s.addToCrewTx(t, roomID, nodeRef) })
	if err != nil {
		return Room{}, err
	}
	return s.Room(ctx, roomID)
}

func (s *Service) addToCrewTx(t *ledger.Tx, roomID, nodeRef string) error {
	r, err := s.roomIn(t.Context(), t, roomID)
	if err != nil {
		return err
	}
	if r.Kind != RoomCrew {
		return problem.Invalid("Nodes join crews; %s is not one.", r.Title)
	}
	if len(r.Members) >= MaxCrewNodes {
		return problem.New(problem.KindConflict, fmt.Sprintf("%s has %d nodes, the most a crew can have.", r.Title, MaxCrewNodes))
	}
	n, err := s.nodeIn(t.Context(), t, nodeRef)
	if err != nil {
		return err
	}
	if n.ParentID != "" {
		return problem.Invalid("%s is a helper; a helper cannot join a crew.", n.Name)
	}
	if err := addMemberTx(t, roomID, n.ID); err != nil {
		return err
	}
	return t.Emit(KindRoom, roomID, RoomChanged{ID: roomID, Change: "updated"})
}

// RemoveFromCrew takes a node out of a crew.
func (s *Service) RemoveFromCrew(ctx context.Context, roomID, nodeRef string) (Room, error) {
	r, err := s.Room(ctx, roomID)
	if err != nil {
		return Room{}, err
	}
	if r.Kind != RoomCrew {
		return Room{}, problem.Invalid("A DM keeps its node; delete the node instead.")
	}
	n, err := s.Node(ctx, nodeRef)
	if err != nil {
		return Room{}, err
	}
	err = s.cfg.Writer.Exec(ctx, func(t *ledger.Tx) error {
		if _, err := t.ExecContext(t.Context(), "DELETE FROM node_room_members WHERE room_id = ? AND node_id = ?", roomID, n.ID); err != nil {
			return fmt.Errorf("node: remove a node from a crew: %w", err)
		}
		return t.Emit(KindRoom, roomID, RoomChanged{ID: roomID, Change: "updated"})
	})
	if err != nil {
		return Room{}, err
	}
	return s.Room(ctx, roomID)
}

// DeleteRoom deletes a crew or a task room with its messages; a DM goes with its node.
func (s *Service) DeleteRoom(ctx context.Context, id string) error {
	r, err := s.Room(ctx, id)
	if err != nil {
		return err
	}
	if r.Kind == RoomDM {
		return problem.Invalid("A DM goes with its node; delete the node to remove it.")
	}
	s.stopRoom(id)
	err = s.cfg.Writer.Exec(ctx, func(t *ledger.Tx) error {
		if _, err := t.ExecContext(t.Context(), "DELETE FROM node_rooms WHERE id = ?", id); err != nil {
			return fmt.Errorf("node: delete room: %w", err)
		}
		return t.Emit(KindRoom, id, RoomChanged{ID: id, Change: "deleted"})
	})
	if err != nil || r.Kind != RoomCrew {
		return err
	}
	return s.unassignTasks(ctx, "", id)
}
