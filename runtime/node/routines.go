package node

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/ensemblework/ensemble/runtime/ledger"
	"github.com/ensemblework/ensemble/runtime/problem"
	"github.com/ensemblework/ensemble/runtime/store"
)

// Routine is work a node does by itself on a schedule, when tasks or pages change, or when a
// webhook calls (spec 002 §6.5). Any routine can also be run now.
type Routine struct {
	ID          string  `json:"id"`
	NodeID      string  `json:"nodeId"`
	Title       string  `json:"title"`
	Instruction string  `json:"instruction"`
	Trigger     Trigger `json:"trigger"`
	// Notify: always (the node posts the result), needed (only when something failed, changed
	// or needs the owner) or never.
	Notify string `json:"notify"`
	// RoomID is where it reports: the node's DM, or a crew it is in.
	RoomID string `json:"roomId"`
	Status string `json:"status"` // active, paused
	// NextAt is a schedule's next time; Token a webhook's token, only when made or renewed.
	NextAt    *time.Time   `json:"nextAt,omitempty"`
	Token     string       `json:"token,omitempty"`
	LastRuns  []RoutineRun `json:"lastRuns"`
	CreatedAt time.Time    `json:"createdAt"`
	UpdatedAt time.Time    `json:"updatedAt"`

	checkedAt time.Time
	tokenHash string
}

// Trigger is what starts a routine.
type Trigger struct {
	Kind string `json:"kind"` // schedule, event, webhook
	// Cron is a schedule's five-field rule, in Timezone (an IANA name; empty is this computer's).
	Cron     string `json:"cron,omitempty"`
	Timezone string `json:"timezone,omitempty"`
	// On is an event's kind of record: task or page; Space limits it to one space.
	On    string `json:"on,omitempty"`
	Space string `json:"space,omitempty"`
	// WindowSeconds gathers an event's changes, or a webhook's calls, into one occurrence.
	WindowSeconds int `json:"windowSeconds,omitempty"`
}

// RoutineRun is one occurrence of a routine.
type RoutineRun struct {
	ID        string     `json:"id"`
	RoutineID string     `json:"routineId"`
	Key       string     `json:"key"`
	Status    string     `json:"status"`
	DueAt     time.Time  `json:"dueAt"`
	Changes   []string   `json:"changes"`
	TurnID    string     `json:"turnId,omitempty"`
	Result    string     `json:"result,omitempty"`
	Error     string     `json:"error,omitempty"`
	CreatedAt time.Time  `json:"createdAt"`
	StartedAt *time.Time `json:"startedAt,omitempty"`
	EndedAt   *time.Time `json:"endedAt,omitempty"`
}

// Trigger kinds, notify rules and routine statuses.
const (
	TriggerSchedule = "schedule"
	TriggerEvent    = "event"
	TriggerWebhook  = "webhook"

	NotifyAlways = "always"
	NotifyNeeded = "needed"
	NotifyNever  = "never"
)

// Occurrence statuses (node_routine_runs.status).
const (
	RunGathering = "gathering"
	RunWaiting   = "waiting"
	RunStarted   = "started"
	RunDone      = "done"
	RunFailed    = "failed"
	RunMissed    = "missed"
	RunSkipped   = "skipped"
)

// Routine limits.
const (
	MaxRoutinesPerNode  = 50
	MaxInstructionLen   = 6000
	MaxRoutineChanges   = 50
	MaxHookBody         = 8000
	defaultEventWindow  = 60
	defaultHookWindow   = 10
	maxWindowSeconds    = 3600
	routineTitleLen     = 60
	routineHistoryLimit = 5
)

// NewRoutine is a routine the owner makes for one of their nodes.
type NewRoutine struct {
	Node        string  `json:"nodeId"` // its id or handle
	Title       string  `json:"title,omitempty"`
	Instruction string  `json:"instruction"`
	Trigger     Trigger `json:"trigger"`
	Notify      string  `json:"notify,omitempty"`
	RoomID      string  `json:"roomId,omitempty"`
}

// RoutineChange changes a routine; a nil field stays as it is.
type RoutineChange struct {
	Title       *string  `json:"title,omitempty"`
	Instruction *string  `json:"instruction,omitempty"`
	Trigger     *Trigger `json:"trigger,omitempty"`
	Notify      *string  `json:"notify,omitempty"`
	RoomID      *string  `json:"roomId,omitempty"`
	Status      *string  `json:"status,omitempty"`
}

// checkTrigger validates tr and fills its defaults.
func checkTrigger(tr Trigger) (Trigger, error) {
	switch tr.Kind {
	case TriggerSchedule:
		tr.Cron = strings.TrimSpace(tr.Cron)
		if tr.Timezone == "" {
			tr.Timezone = "Local"
		}
		if _, err := parseSchedule(tr.Cron, tr.Timezone); err != nil {
			return tr, err
		}
		tr.On, tr.Space, tr.WindowSeconds = "", "", 0
	case TriggerEvent:
		if tr.On != "task" && tr.On != "page" {
			return tr, problem.Invalid("An event routine watches task or page changes, not %q.", tr.On)
		}
		if tr.WindowSeconds == 0 {
			tr.WindowSeconds = defaultEventWindow
		}
		tr.Cron, tr.Timezone = "", ""
	case TriggerWebhook:
		if tr.WindowSeconds == 0 {
			tr.WindowSeconds = defaultHookWindow
		}
		tr.Cron, tr.Timezone, tr.On, tr.Space = "", "", "", ""
	default:
		return tr, problem.Invalid("A routine's trigger is schedule, event or webhook, not %q.", tr.Kind)
	}
	if tr.WindowSeconds < 0 || tr.WindowSeconds > maxWindowSeconds {
		return tr, problem.Invalid("windowSeconds is %d; it takes 1 to %d.", tr.WindowSeconds, maxWindowSeconds)
	}
	return tr, nil
}

func checkNotify(n string) (string, error) {
	switch n {
	case "":
		return NotifyAlways, nil
	case NotifyAlways, NotifyNeeded, NotifyNever:
		return n, nil
	}
	return "", problem.Invalid("notify is always, needed or never, not %q.", n)
}

func checkInstruction(s string) (string, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return "", problem.Invalid("Say what the routine does each time: give it an instruction.")
	}
	if len([]rune(s)) > MaxInstructionLen {
		return "", problem.Invalid("A routine's instruction is at most %d characters.", MaxInstructionLen)
	}
	return s, nil
}

func routineTitle(title, instruction string) string {
	title = strings.TrimSpace(title)
	if title == "" {
		title = strings.Join(strings.Fields(instruction), " ")
	}
	if r := []rune(title); len(r) > routineTitleLen {
		title = strings.TrimSpace(string(r[:routineTitleLen])) + "…"
	}
	return title
}

// reportRoomTx checks that room is where n's routine may report: its DM (empty) or a crew it is
// in; never a room other people read.
func (s *Service) reportRoomTx(tx *ledger.Tx, n Node, room string) (string, error) {
	if room == "" || room == n.DMRoomID {
		return "", nil
	}
	var kind string
	err := tx.QueryRowContext(tx.Context(), `SELECT r.kind FROM node_rooms r JOIN node_room_members m ON m.room_id = r.id
		WHERE r.id = ? AND m.node_id = ?`, room, n.ID).Scan(&kind)
	if errors.Is(err, sql.ErrNoRows) {
		return "", problem.Invalid("@%s is not in the room %q; a routine reports in its DM or a crew it is in.", n.Slug, room)
	}
	if err != nil {
		return "", fmt.Errorf("node: read a routine's room: %w", err)
	}
	if kind != string(RoomCrew) {
		return "", problem.Invalid("A routine reports in its node's DM or one of your crews it is in.")
	}
	return room, nil
}

// newHookToken makes a webhook token and the hash kept of it.
func newHookToken() (token, hash string) {
	b := make([]byte, 32)
	rand.Read(b)
	token = "rth_" + hex.EncodeToString(b)
	return token, hashToken(token)
}

func hashToken(t string) string {
	sum := sha256.Sum256([]byte(t))
	return hex.EncodeToString(sum[:])
}

// CreateRoutine makes a routine; a webhook routine's answer carries its token, shown this once.
func (s *Service) CreateRoutine(ctx context.Context, in NewRoutine) (Routine, error) {
	n, err := s.Node(ctx, in.Node)
	if err != nil {
		return Routine{}, err
	}
	instr, err := checkInstruction(in.Instruction)
	if err != nil {
		return Routine{}, err
	}
	tr, err := checkTrigger(in.Trigger)
	if err != nil {
		return Routine{}, err
	}
	notify, err := checkNotify(in.Notify)
	if err != nil {
		return Routine{}, err
	}
	id := ledger.NewID("rtn_")
	var token, hash string
	if tr.Kind == TriggerWebhook {
		token, hash = newHookToken()
	}
	err = s.cfg.Writer.Exec(ctx, func(tx *ledger.Tx) error {
		room, err := s.reportRoomTx(tx, n, in.RoomID)
		if err != nil {
			return err
		}
		var count int
		if err := tx.QueryRowContext(tx.Context(), "SELECT count(*) FROM node_routines WHERE node_id = ?", n.ID).Scan(&count); err != nil {
			return fmt.Errorf("node: count routines: %w", err)
		}
		if count >= MaxRoutinesPerNode {
			return problem.Conflict("@%s has %d routines, the most there can be; delete one first.", n.Slug, MaxRoutinesPerNode)
		}
		now := store.Stamp(s.now())
		_, err = tx.ExecContext(tx.Context(), `INSERT INTO node_routines (id, node_id, title, instruction, trigger, cron, timezone,
			event_on, event_space, window_seconds, notify, room_id, token_hash, checked_at, created_at, updated_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			id, n.ID, routineTitle(in.Title, instr), instr, tr.Kind, tr.Cron, tr.Timezone, tr.On, tr.Space, tr.WindowSeconds,
			notify, nullable(room), hash, now, now, now)
		if err != nil {
			return fmt.Errorf("node: make a routine: %w", err)
		}
		return nil
	})
	if err != nil {
		return Routine{}, err
	}
	r, err := s.Routine(ctx, id)
	r.Token = token
	return r, err
}

const routineCols = `r.id, r.node_id, r.title, r.instruction, r.trigger, r.cron, r.timezone, r.event_on, r.event_space,
	r.window_seconds, r.notify, coalesce(r.room_id, n.dm_room_id, ''), r.status, r.token_hash, r.checked_at, r.created_at, r.updated_at`

const routineFrom = ` FROM node_routines r JOIN (SELECT a.id, (SELECT id FROM node_rooms WHERE dm_node_id = a.id AND kind = 'dm') AS dm_room_id
	FROM node_agents a) n ON n.id = r.node_id `

func scanRoutine(sc scanner) (Routine, error) {
	var r Routine
	var checked, created, updated string
	err := sc.Scan(&r.ID, &r.NodeID, &r.Title, &r.Instruction, &r.Trigger.Kind, &r.Trigger.Cron, &r.Trigger.Timezone, &r.Trigger.On,
		&r.Trigger.Space, &r.Trigger.WindowSeconds, &r.Notify, &r.RoomID, &r.Status, &r.tokenHash, &checked, &created, &updated)
	if err != nil {
		return Routine{}, err
	}
	r.checkedAt, r.CreatedAt, r.UpdatedAt = store.ReadTime(checked), store.ReadTime(created), store.ReadTime(updated)
	return r, nil
}

func (s *Service) queryRoutines(ctx context.Context, db querier, where string, args ...any) ([]Routine, error) {
	return queryAll(ctx, db, "read routines", "SELECT "+routineCols+routineFrom+where, args, scanRoutine)
}

// dress fills what the list shows beside a routine: when it runs next and its last runs.
func (s *Service) dress(ctx context.Context, r *Routine) error {
	if r.Trigger.Kind == TriggerSchedule && r.Status == StatusActive {
		if sch, err := parseSchedule(r.Trigger.Cron, r.Trigger.Timezone); err == nil {
			next := sch.next(maxTime(r.checkedAt, s.now()))
			r.NextAt = &next
		}
	}
	runs, err := s.RoutineRuns(ctx, r.ID, routineHistoryLimit)
	r.LastRuns = runs
	return err
}

func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// Routines lists the routines of one node (its id or handle), or every node's for "".
func (s *Service) Routines(ctx context.Context, nodeRef string) ([]Routine, error) {
	where, args := "ORDER BY r.created_at, r.rowid", []any{}
	if nodeRef != "" {
		n, err := s.Node(ctx, nodeRef)
		if err != nil {
			return nil, err
		}
		where, args = "WHERE r.node_id = ? "+where, []any{n.ID}
	}
	rs, err := s.queryRoutines(ctx, s.cfg.Store.Reader(), where, args...)
	if err != nil {
		return nil, err
	}
	for i := range rs {
		if err := s.dress(ctx, &rs[i]); err != nil {
			return nil, err
		}
	}
	if rs == nil {
		rs = []Routine{}
	}
	return rs, nil
}

// Routine returns one routine, or a not-found problem.
func (s *Service) Routine(ctx context.Context, id string) (Routine, error) {
	r, err := s.routineIn(ctx, s.cfg.Store.Reader(), id)
	if err != nil {
		return Routine{}, err
	}
	return r, s.dress(ctx, &r)
}

func (s *Service) routineIn(ctx context.Context, db querier, id string) (Routine, error) {
	rs, err := s.queryRoutines(ctx, db, "WHERE r.id = ?", id)
	if err != nil {
		return Routine{}, err
	}
	if len(rs) == 0 {
		return Routine{}, problem.NotFound("There is no routine %q.", id)
	}
	return rs[0], nil
}

// UpdateRoutine changes a routine. Pausing it skips what was waiting to run; a new schedule, or
// resuming, counts its times from now, so nothing from before is recorded as missed. A routine
// that becomes a webhook gets its token in this answer, once.
func (s *Service) UpdateRoutine(ctx context.Context, id string, c RoutineChange) (Routine, error) {
	var token string
	err := s.cfg.Writer.Exec(ctx, func(tx *ledger.Tx) error {
		r, err := s.routineIn(tx.Context(), tx, id)
		if err != nil {
			return err
		}
		n, err := s.nodeIn(tx.Context(), tx, r.NodeID)
		if err != nil {
			return err
		}
		old := r
		if c.Instruction != nil {
			if r.Instruction, err = checkInstruction(*c.Instruction); err != nil {
				return err
			}
		}
		if c.Title != nil {
			r.Title = routineTitle(*c.Title, r.Instruction)
		}
		if c.Trigger != nil {
			if r.Trigger, err = checkTrigger(*c.Trigger); err != nil {
				return err
			}
		}
		if c.Notify != nil {
			if r.Notify, err = checkNotify(*c.Notify); err != nil {
				return err
			}
		}
		room := r.RoomID
		if c.RoomID != nil {
			room = *c.RoomID
		}
		if room, err = s.reportRoomTx(tx, n, room); err != nil {
			return err
		}
		if c.Status != nil {
			if *c.Status != StatusActive && *c.Status != StatusPaused {
				return problem.Invalid("A routine's status is active or paused, not %q.", *c.Status)
			}
			r.Status = *c.Status
		}
		now := s.now()
		checked := r.checkedAt
		if r.Trigger != old.Trigger || r.Status == StatusActive && old.Status == StatusPaused {
			checked = now
		}
		hash := r.tokenHash
		switch {
		case r.Trigger.Kind != TriggerWebhook:
			hash = ""
		case hash == "": // it became a webhook: its token is shown in this answer, once
			token, hash = newHookToken()
		}
		_, err = tx.ExecContext(tx.Context(), `UPDATE node_routines SET title = ?, instruction = ?, trigger = ?, cron = ?, timezone = ?,
			event_on = ?, event_space = ?, window_seconds = ?, notify = ?, room_id = ?, status = ?, token_hash = ?, checked_at = ?, updated_at = ?
			WHERE id = ?`, r.Title, r.Instruction, r.Trigger.Kind, r.Trigger.Cron, r.Trigger.Timezone, r.Trigger.On, r.Trigger.Space,
			r.Trigger.WindowSeconds, r.Notify, nullable(room), r.Status, hash, store.Stamp(checked), store.Stamp(now), id)
		if err != nil {
			return fmt.Errorf("node: change a routine: %w", err)
		}
		if r.Status == StatusPaused && old.Status != StatusPaused {
			_, err = tx.ExecContext(tx.Context(), `UPDATE node_routine_runs SET status = 'skipped', error = 'The routine was paused.', ended_at = ?
				WHERE routine_id = ? AND status IN ('gathering', 'waiting')`, store.Stamp(now), id)
			if err != nil {
				return fmt.Errorf("node: pause a routine: %w", err)
			}
		}
		return nil
	})
	if err != nil {
		return Routine{}, err
	}
	r, err := s.Routine(ctx, id)
	r.Token = token
	return r, err
}

// DeleteRoutine deletes a routine and its history; a run going now finishes as the node's work.
func (s *Service) DeleteRoutine(ctx context.Context, id string) error {
	return s.cfg.Writer.Exec(ctx, func(tx *ledger.Tx) error {
		res, err := tx.ExecContext(tx.Context(), "DELETE FROM node_routines WHERE id = ?", id)
		if err != nil {
			return fmt.Errorf("node: delete a routine: %w", err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return problem.NotFound("There is no routine %q.", id)
		}
		return nil
	})
}

// RenewRoutineToken gives a webhook routine a new token, shown this once; the old one stops working.
func (s *Service) RenewRoutineToken(ctx context.Context, id string) (Routine, error) {
	token, hash := newHookToken()
	err := s.cfg.Writer.Exec(ctx, func(tx *ledger.Tx) error {
		r, err := s.routineIn(tx.Context(), tx, id)
		if err != nil {
			return err
		}
		if r.Trigger.Kind != TriggerWebhook {
			return problem.Invalid("Only a webhook routine has a token; this one runs %s.", r.Trigger.Kind)
		}
		_, err = tx.ExecContext(tx.Context(), "UPDATE node_routines SET token_hash = ?, updated_at = ? WHERE id = ?", hash, store.Stamp(s.now()), id)
		return err
	})
	if err != nil {
		return Routine{}, err
	}
	r, err := s.Routine(ctx, id)
	r.Token = token
	return r, err
}

const routineRunCols = `id, routine_id, key, status, due_at, changes, turn_id, result, error, created_at, started_at, ended_at`

func scanRoutineRun(sc scanner) (RoutineRun, error) {
	var r RoutineRun
	var due, changes, created string
	var started, ended *string
	if err := sc.Scan(&r.ID, &r.RoutineID, &r.Key, &r.Status, &due, &changes, &r.TurnID, &r.Result, &r.Error, &created, &started, &ended); err != nil {
		return RoutineRun{}, err
	}
	r.DueAt, r.CreatedAt = store.ReadTime(due), store.ReadTime(created)
	r.Changes = []string{}
	jsonInto(changes, &r.Changes)
	if started != nil {
		t := store.ReadTime(*started)
		r.StartedAt = &t
	}
	if ended != nil {
		t := store.ReadTime(*ended)
		r.EndedAt = &t
	}
	return r, nil
}

func (s *Service) queryRoutineRuns(ctx context.Context, db querier, where string, args ...any) ([]RoutineRun, error) {
	return queryAll(ctx, db, "read a routine's runs", "SELECT "+routineRunCols+" FROM node_routine_runs "+where, args, scanRoutineRun)
}

// RoutineRuns is a routine's history, newest first.
func (s *Service) RoutineRuns(ctx context.Context, id string, limit int) ([]RoutineRun, error) {
	if limit <= 0 || limit > 200 {
		limit = 50
	}
	return s.queryRoutineRuns(ctx, s.cfg.Store.Reader(), "WHERE routine_id = ? ORDER BY due_at DESC, rowid DESC LIMIT ?", id, limit)
}

// RunRoutine runs a routine now, whatever its trigger or status: one occurrence (manual:<id>),
// which waits behind a run still going.
func (s *Service) RunRoutine(ctx context.Context, id string) (RoutineRun, error) {
	runID := ledger.NewID("rrn_")
	err := s.cfg.Writer.Exec(ctx, func(tx *ledger.Tx) error {
		r, err := s.routineIn(tx.Context(), tx, id)
		if err != nil {
			return err
		}
		if err := s.recordRunTx(tx, runID, r.ID, "manual:"+runID, RunWaiting, s.now(), nil); err != nil {
			return err
		}
		return s.startNextTx(tx, r.ID)
	})
	if err != nil {
		return RoutineRun{}, err
	}
	s.wake()
	runs, err := s.queryRoutineRuns(ctx, s.cfg.Store.Reader(), "WHERE id = ?", runID)
	if err != nil || len(runs) == 0 {
		return RoutineRun{}, fmt.Errorf("node: read the run just made: %v", err)
	}
	return runs[0], nil
}
