package node

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/ensemblework/ensemble/runtime/ledger"
	"github.com/ensemblework/ensemble/runtime/problem"
	"github.com/ensemblework/ensemble/runtime/store"
)

// Node is one of the person's nodes.
type Node struct {
	ID            string    `json:"id"`
	Name          string    `json:"name"`
	Slug          string    `json:"slug"`
	Role          string    `json:"role"`
	TemplateID    string    `json:"templateId,omitempty"`
	Charter       string    `json:"charter"`
	CharterEdited bool      `json:"charterEdited"`
	Avatar        Avatar    `json:"avatar"`
	Provider      string    `json:"provider,omitempty"`
	Model         string    `json:"model,omitempty"`
	Effort        string    `json:"effort,omitempty"`
	Status        string    `json:"status"` // active, paused
	Autonomy      Autonomy  `json:"autonomy"`
	DMRoomID      string    `json:"dmRoomId"`
	ParentID      string    `json:"parentId,omitempty"`
	CreatedAt     time.Time `json:"createdAt"`
	UpdatedAt     time.Time `json:"updatedAt"`
}

// Autonomy is what a node may do without asking its owner (spec 002 §6.1, §9).
type Autonomy struct {
	// CreateNodes: "auto" makes nodes and crews the node proposes at once; "ask" (the default)
	// puts each on a card.
	CreateNodes string `json:"createNodes,omitempty"`
	// Helpers is how many helpers may work at once (0: the default, 4).
	Helpers int `json:"helpers,omitempty"`
	// The rest belong to the computer and rooms with other people: kept, not yet used here.
	SharedRooms          string `json:"sharedRooms,omitempty"`
	ComputerFiles        bool   `json:"computerFiles,omitempty"`
	ComputerWork         string `json:"computerWork,omitempty"`
	AnswerAgentQuestions string `json:"answerAgentQuestions,omitempty"`
	// Can is a helper's grant from its parent: read (the default) or sessions (helpers.go).
	Can string `json:"can,omitempty"`
}

func (a Autonomy) check() error {
	for name, v := range map[string]string{"createNodes": a.CreateNodes, "sharedRooms": a.SharedRooms, "computerWork": a.ComputerWork, "answerAgentQuestions": a.AnswerAgentQuestions} {
		if v != "" && v != "ask" && v != "auto" {
			return problem.Invalid("autonomy.%s is %q; it takes ask or auto.", name, v)
		}
	}
	if a.Can != "" && a.Can != CanRead && a.Can != CanSessions {
		return problem.Invalid("autonomy.can is %q; it takes read or sessions.", a.Can)
	}
	if a.Helpers < 0 || a.Helpers > 16 {
		return problem.Invalid("autonomy.helpers is %d; it takes 0 to 16.", a.Helpers)
	}
	return nil
}

// Paused reports whether the node is paused.
func (n Node) Paused() bool { return n.Status == StatusPaused }

// Node statuses.
const (
	StatusActive = "active"
	StatusPaused = "paused"
)

// NewNode is what a node is made from: a template, and what the person gave.
type NewNode struct {
	TemplateID string  `json:"templateId,omitempty"`
	Name       string  `json:"name,omitempty"`
	Slug       string  `json:"slug,omitempty"`
	Role       string  `json:"role,omitempty"`
	Charter    string  `json:"charter,omitempty"`
	Avatar     *Avatar `json:"avatar,omitempty"`
	Provider   string  `json:"provider,omitempty"`
	Model      string  `json:"model,omitempty"`
	Effort     string  `json:"effort,omitempty"`
}

// NodeChange is a change to a node; a nil field stays as it is.
type NodeChange struct {
	Name     *string   `json:"name,omitempty"`
	Slug     *string   `json:"slug,omitempty"`
	Role     *string   `json:"role,omitempty"`
	Charter  *string   `json:"charter,omitempty"`
	Avatar   *Avatar   `json:"avatar,omitempty"`
	Provider *string   `json:"provider,omitempty"`
	Model    *string   `json:"model,omitempty"`
	Effort   *string   `json:"effort,omitempty"`
	Status   *string   `json:"status,omitempty"`
	Autonomy *Autonomy `json:"autonomy,omitempty"`
}

const nodeCols = `n.id, n.name, n.slug, n.role, n.template_id, n.charter, n.charter_edited, n.avatar, n.provider, n.model,
	n.effort, n.status, n.autonomy, coalesce(n.parent_node_id, ''), n.created_at, n.updated_at,
	coalesce((SELECT r.id FROM node_rooms r WHERE r.kind = 'dm' AND r.dm_node_id = n.id), '')`

type scanner interface{ Scan(...any) error }

func scanNode(sc scanner) (Node, error) {
	var n Node
	var edited int
	var avatar, autonomy, created, updated string
	err := sc.Scan(&n.ID, &n.Name, &n.Slug, &n.Role, &n.TemplateID, &n.Charter, &edited, &avatar, &n.Provider, &n.Model,
		&n.Effort, &n.Status, &autonomy, &n.ParentID, &created, &updated, &n.DMRoomID)
	if err != nil {
		return Node{}, err
	}
	n.CharterEdited = edited == 1
	json.Unmarshal([]byte(avatar), &n.Avatar)
	json.Unmarshal([]byte(autonomy), &n.Autonomy)
	n.CreatedAt, n.UpdatedAt = store.ReadTime(created), store.ReadTime(updated)
	if t, ok := TemplateByID(n.TemplateID); ok {
		n.TemplateID = t.ID
	}
	n.Charter = CharterOf(n.TemplateID, n.Charter, n.CharterEdited)
	return n, nil
}

type querier interface {
	QueryContext(ctx context.Context, q string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, q string, args ...any) *sql.Row
}

// Nodes lists the person's lasting nodes (helpers are not listed), oldest first.
func (s *Service) Nodes(ctx context.Context) ([]Node, error) {
	return s.queryNodes(ctx, s.cfg.Store.Reader(), "WHERE n.parent_node_id IS NULL ORDER BY n.created_at, n.rowid")
}

func (s *Service) queryNodes(ctx context.Context, db querier, where string, args ...any) ([]Node, error) {
	return queryAll(ctx, db, "list nodes", "SELECT "+nodeCols+" FROM node_agents n "+where, args, scanNode)
}

// Node returns one node by id or handle, or a not-found problem.
func (s *Service) Node(ctx context.Context, ref string) (Node, error) {
	return s.nodeIn(ctx, s.cfg.Store.Reader(), ref)
}

func (s *Service) nodeIn(ctx context.Context, db querier, ref string) (Node, error) {
	ref = strings.TrimPrefix(strings.TrimSpace(ref), "@")
	n, err := scanNode(db.QueryRowContext(ctx, "SELECT "+nodeCols+" FROM node_agents n WHERE n.id = ? OR n.slug = lower(?)", ref, ref))
	if errors.Is(err, sql.ErrNoRows) {
		return Node{}, problem.NotFound("There is no node %q.", ref)
	}
	if err != nil {
		return Node{}, fmt.Errorf("node: read node %s: %w", ref, err)
	}
	return n, nil
}

// Create makes a node and its DM (spec 002 §3).
func (s *Service) Create(ctx context.Context, in NewNode) (Node, error) {
	var id string
	err := s.cfg.Writer.Exec(ctx, func(t *ledger.Tx) error {
		var err error
		id, err = s.createTx(t, in, "")
		return err
	})
	if err != nil {
		return Node{}, err
	}
	return s.Node(ctx, id)
}

// createTx makes a node (a helper when parent is set) and its DM inside t.
func (s *Service) createTx(t *ledger.Tx, in NewNode, parent string) (string, error) {
	ctx := t.Context()
	var count int
	if err := t.QueryRowContext(ctx, "SELECT count(*) FROM node_agents WHERE parent_node_id IS NULL").Scan(&count); err != nil {
		return "", fmt.Errorf("node: count nodes: %w", err)
	}
	if parent == "" && count >= MaxNodes {
		return "", problem.New(problem.KindConflict, fmt.Sprintf("You have %d nodes, the most there can be; delete one first.", MaxNodes))
	}
	var tpl Template
	if in.TemplateID != "" {
		var ok bool
		if tpl, ok = TemplateByID(in.TemplateID); !ok {
			return "", problem.Invalid("There is no node template %q.", in.TemplateID)
		}
	}
	name := strings.TrimSpace(in.Name)
	if name == "" {
		name = tpl.Name
	}
	if name == "" {
		return "", problem.Invalid("Give the node a name, or pick a template.")
	}
	if len(name) > MaxNameLen {
		return "", problem.Invalid("A node's name is at most %d characters.", MaxNameLen)
	}
	if in.Name == "" || strings.EqualFold(name, tpl.Name) {
		// A template's default name gets a number when taken ("Researcher 2").
		var err error
		if name, err = freeName(t, name); err != nil {
			return "", err
		}
	} else if taken, err := nameTaken(t, name, ""); err != nil {
		return "", err
	} else if taken {
		return "", problem.New(problem.KindConflict, fmt.Sprintf("You already have a node named %s. Pick another name.", name))
	}
	slug, err := s.handleFor(t, in, tpl, name)
	if err != nil {
		return "", err
	}
	role := strings.TrimSpace(in.Role)
	if role == "" {
		role = tpl.Role
	}
	if role == "" {
		role = "assistant"
	}
	charter := strings.TrimSpace(in.Charter)
	if len(charter) > MaxCharterLen {
		return "", problem.Invalid("A charter is at most %d characters.", MaxCharterLen)
	}
	edited := charter != "" && charter != tpl.Charter
	avatar := AvatarFor(count)
	if in.TemplateID != "" {
		avatar = tpl.Avatar
	}
	if in.Avatar != nil {
		if err := in.Avatar.check(); err != nil {
			return "", err
		}
		avatar = *in.Avatar
	}
	if err := checkEffort(in.Effort); err != nil {
		return "", err
	}
	id := ledger.NewID("nod_")
	now := store.Stamp(t.Now())
	av, _ := json.Marshal(avatar)
	var par any
	if parent != "" {
		par = parent
	}
	_, err = t.ExecContext(ctx, `INSERT INTO node_agents (id, name, slug, role, template_id, charter, charter_edited, avatar,
		provider, model, effort, status, autonomy, parent_node_id, created_at, updated_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'active', '{}', ?, ?, ?)`,
		id, name, slug, role, tpl.ID, charter, b2i(edited), string(av), in.Provider, in.Model, in.Effort, par, now, now)
	if err != nil {
		return "", fmt.Errorf("node: create node: %w", err)
	}
	if parent == "" {
		if _, err := s.createRoomTx(t, RoomDM, name, id, "", []string{id}); err != nil {
			return "", err
		}
	}
	return id, t.Emit(KindNode, id, NodeChanged{ID: id, Change: "created"})
}

// handleFor is a new node's handle: the slug given, else the template's while the node keeps the
// template's name, else one made from the name, numbered when taken.
func (s *Service) handleFor(t *ledger.Tx, in NewNode, tpl Template, name string) (string, error) {
	if in.Slug != "" {
		slug := strings.ToLower(strings.TrimPrefix(strings.TrimSpace(in.Slug), "@"))
		if err := checkHandle(slug); err != nil {
			return "", err
		}
		if taken, err := slugTaken(t, slug, ""); err != nil {
			return "", err
		} else if taken {
			return "", problem.New(problem.KindConflict, fmt.Sprintf("Another of your nodes is already @%s. Pick another handle.", slug))
		}
		return slug, nil
	}
	base := Slugify(name)
	if tpl.ID != "" && strings.HasPrefix(strings.ToLower(name), strings.ToLower(tpl.Name)) {
		base = tpl.Slug
	}
	if base == "" || ReservedHandle(base) {
		base = "node"
	}
	for i := 1; ; i++ {
		slug := base
		if i > 1 {
			slug = base + "-" + strconv.Itoa(i)
		}
		taken, err := slugTaken(t, slug, "")
		if err != nil {
			return "", err
		}
		if !taken {
			return slug, nil
		}
	}
}

func checkHandle(slug string) error {
	if ReservedHandle(slug) {
		return problem.Invalid("@%s is kept for mentioning every node; pick another handle.", slug)
	}
	if !ValidHandle(slug) {
		return problem.Invalid("A handle is 1 to 32 lowercase letters, digits, - or _; %q is not one.", slug)
	}
	return nil
}

func checkEffort(e string) error {
	switch e {
	case "", "low", "medium", "high":
		return nil
	}
	return problem.Invalid("Effort is low, medium or high, not %q.", e)
}

func slugTaken(t *ledger.Tx, slug, except string) (bool, error) {
	var n int
	err := t.QueryRowContext(t.Context(), "SELECT count(*) FROM node_agents WHERE slug = ? AND id <> ?", slug, except).Scan(&n)
	if err != nil {
		return false, fmt.Errorf("node: check handle: %w", err)
	}
	return n > 0, nil
}

func nameTaken(t *ledger.Tx, name, except string) (bool, error) {
	var n int
	err := t.QueryRowContext(t.Context(), "SELECT count(*) FROM node_agents WHERE lower(name) = lower(?) AND id <> ? AND parent_node_id IS NULL", name, except).Scan(&n)
	if err != nil {
		return false, fmt.Errorf("node: check name: %w", err)
	}
	return n > 0, nil
}

func freeName(t *ledger.Tx, base string) (string, error) {
	for i := 1; ; i++ {
		name := base
		if i > 1 {
			name = fmt.Sprintf("%s %d", base, i)
		}
		taken, err := nameTaken(t, name, "")
		if err != nil {
			return "", err
		}
		if !taken {
			return name, nil
		}
	}
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// Update changes a node (spec 002 §9 PATCH). A new name renames its DM; status paused stops what
// it is doing and says so in its DM, active resumes it.
func (s *Service) Update(ctx context.Context, ref string, c NodeChange) (Node, error) {
	n, err := s.Node(ctx, ref)
	if err != nil {
		return Node{}, err
	}
	if c.Status != nil && *c.Status != StatusActive && *c.Status != StatusPaused {
		return Node{}, problem.Invalid("A node's status is active or paused, not %q.", *c.Status)
	}
	pausing := c.Status != nil && *c.Status == StatusPaused && !n.Paused()
	err = s.cfg.Writer.Exec(ctx, func(t *ledger.Tx) error {
		if err := s.updateTx(t, n, c); err != nil {
			return err
		}
		if pausing {
			return s.pausedTx(t, n)
		}
		return nil
	})
	if err != nil {
		return Node{}, err
	}
	if pausing {
		s.stopNode(n.ID)
		s.stopNodeRuns(ctx, n.ID)
		s.stopHelpers(ctx, n.ID)
	}
	s.wake()
	return s.Node(ctx, n.ID)
}

func (s *Service) updateTx(t *ledger.Tx, n Node, c NodeChange) error {
	ctx := t.Context()
	set := map[string]any{}
	if c.Name != nil {
		name := strings.TrimSpace(*c.Name)
		if name == "" || len(name) > MaxNameLen {
			return problem.Invalid("A node's name is 1 to %d characters.", MaxNameLen)
		}
		if taken, err := nameTaken(t, name, n.ID); err != nil {
			return err
		} else if taken {
			return problem.New(problem.KindConflict, fmt.Sprintf("You already have a node named %s. Pick another name.", name))
		}
		set["name"] = name
		if _, err := t.ExecContext(ctx, "UPDATE node_rooms SET title = ? WHERE kind = 'dm' AND dm_node_id = ?", name, n.ID); err != nil {
			return fmt.Errorf("node: rename the DM: %w", err)
		}
	}
	if c.Slug != nil {
		slug := strings.ToLower(strings.TrimPrefix(strings.TrimSpace(*c.Slug), "@"))
		if err := checkHandle(slug); err != nil {
			return err
		}
		if taken, err := slugTaken(t, slug, n.ID); err != nil {
			return err
		} else if taken {
			return problem.New(problem.KindConflict, fmt.Sprintf("Another of your nodes is already @%s. Pick another handle.", slug))
		}
		set["slug"] = slug
	}
	if c.Role != nil {
		role := strings.TrimSpace(*c.Role)
		if role == "" || len(role) > MaxNameLen {
			return problem.Invalid("A node's role is 1 to %d characters.", MaxNameLen)
		}
		set["role"] = role
	}
	if c.Charter != nil {
		ch := strings.TrimSpace(*c.Charter)
		if len(ch) > MaxCharterLen {
			return problem.Invalid("A charter is at most %d characters.", MaxCharterLen)
		}
		tpl, _ := TemplateByID(n.TemplateID)
		set["charter"], set["charter_edited"] = ch, b2i(ch != tpl.Charter)
	}
	if c.Avatar != nil {
		if err := c.Avatar.check(); err != nil {
			return err
		}
		av, _ := json.Marshal(c.Avatar)
		set["avatar"] = string(av)
	}
	if c.Provider != nil {
		set["provider"] = strings.TrimSpace(*c.Provider)
	}
	if c.Model != nil {
		set["model"] = strings.TrimSpace(*c.Model)
	}
	if c.Effort != nil {
		if err := checkEffort(*c.Effort); err != nil {
			return err
		}
		set["effort"] = *c.Effort
	}
	if c.Status != nil {
		set["status"] = *c.Status
	}
	if c.Autonomy != nil {
		if err := c.Autonomy.check(); err != nil {
			return err
		}
		au, _ := json.Marshal(c.Autonomy)
		set["autonomy"] = string(au)
	}
	if len(set) == 0 {
		return problem.Invalid("Say what to change: name, slug, role, charter, avatar, provider, model, effort, status or autonomy.")
	}
	set["updated_at"] = store.Stamp(t.Now())
	var cols []string
	var args []any
	for k, v := range set {
		cols = append(cols, k+" = ?")
		args = append(args, v)
	}
	args = append(args, n.ID)
	if _, err := t.ExecContext(ctx, "UPDATE node_agents SET "+strings.Join(cols, ", ")+" WHERE id = ?", args...); err != nil {
		return fmt.Errorf("node: change node %s: %w", n.Name, err)
	}
	return t.Emit(KindNode, n.ID, NodeChanged{ID: n.ID, Change: "updated"})
}

// Delete removes a node with its DM, turns, conversations and memory (spec 002 §9).
func (s *Service) Delete(ctx context.Context, ref string) error {
	n, err := s.Node(ctx, ref)
	if err != nil {
		return err
	}
	s.stopNode(n.ID)
	var convs []string
	err = s.cfg.Writer.Exec(ctx, func(t *ledger.Tx) error {
		rows, err := t.QueryContext(t.Context(), `SELECT conversation_id FROM node_room_members WHERE node_id = ? AND conversation_id <> ''
			UNION SELECT private_conversation_id FROM node_room_members WHERE node_id = ? AND private_conversation_id <> ''`, n.ID, n.ID)
		if err != nil {
			return fmt.Errorf("node: delete node: %w", err)
		}
		for rows.Next() {
			var c string
			rows.Scan(&c)
			convs = append(convs, c)
		}
		rows.Close()
		if _, err := t.ExecContext(t.Context(), "UPDATE node_rooms SET lead_node_id = NULL WHERE lead_node_id = ?", n.ID); err != nil {
			return fmt.Errorf("node: delete node: %w", err)
		}
		if _, err := t.ExecContext(t.Context(), "DELETE FROM node_agents WHERE id = ?", n.ID); err != nil {
			return fmt.Errorf("node: delete node: %w", err)
		}
		return t.Emit(KindNode, n.ID, NodeChanged{ID: n.ID, Change: "deleted"})
	})
	if err != nil {
		return err
	}
	for _, c := range convs {
		if err := s.cfg.Assistant.Delete(ctx, c); err != nil {
			s.log.Info("node: delete a conversation of a deleted node", "conversation", c, "err", err)
		}
	}
	s.closeNodeTabs(ctx, n.ID)
	return s.unassignTasks(ctx, n.ID, "")
}
