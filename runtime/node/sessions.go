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

	"github.com/ensemblework/ensemble/runtime/jobs"
	"github.com/ensemblework/ensemble/runtime/ledger"
	"github.com/ensemblework/ensemble/runtime/problem"
	"github.com/ensemblework/ensemble/runtime/store"
	"github.com/ensemblework/ensemble/runtime/tools"
)

// A node drives the person's agent sessions (spec 002 §8): a session is a chain of runs that
// continue each other, named by its first run's job id. Each run a node asks for is a node_runs
// row. A message sent to a busy session waits in the session's own queue (state queued, by
// position) and becomes a job only when the run before it has ended, continuing the run that
// actually ran last, so the chain that ran is one line whatever was reordered or taken out.

// Node run states.
const (
	runQueued    = "queued"
	runStarted   = "started"
	runCancelled = "cancelled"
	runFailed    = "failed"
)

// Deliveries of node_session_send (spec 002 §8.3).
const (
	DeliverQueue   = "queue"
	DeliverSteer   = "steer"
	DeliverReplace = "replace"
)

// nodeRun is one node_runs row.
type nodeRun struct {
	ID, JobID, NodeID, RoomID, Lane string
	Private, ByOwner                bool
	TurnID, Root, Title, Prompt     string
	State                           string
	Position                        int
	Error, CardID                   string
	Settings                        RunSettings
	Quiet                           bool
	Notified                        string
	Watchdog                        map[string]string
	CreatedAt                       time.Time
}

// RunSettings are a run's three sets of settings (spec 002 §8.10).
type RunSettings struct {
	Requested SettingSet `json:"requested"`
	Resolved  SettingSet `json:"resolved"`
	Observed  SettingSet `json:"observed"`
}

// SettingSet is one set of a run's settings.
type SettingSet struct {
	Agent   string `json:"agent,omitempty"`
	Model   string `json:"model,omitempty"`
	Effort  string `json:"effort,omitempty"`
	Context string `json:"context,omitempty"`
	Fast    *bool  `json:"fast,omitempty"`
}

// into puts the model, effort and context asked for into a run's settings; what is left out stays.
func (set SettingSet) into(in *jobs.SettingsInput) {
	if set.Model != "" {
		in.Model = &set.Model
	}
	if set.Effort != "" {
		in.Effort = &set.Effort
	}
	if set.Context != "" {
		in.ContextTier = &set.Context
	}
}

const runCols = `id, coalesce(job_id, ''), node_id, room_id, lane, private, by_owner, turn_id, session_root, title, prompt,
	state, position, error, coalesce(card_message_id, ''), settings, quiet, coalesce(ended_notified, ''), watchdog, created_at`

func scanRun(sc scanner) (nodeRun, error) {
	var r nodeRun
	var private, byOwner, quiet int
	var settings, watchdog, created string
	err := sc.Scan(&r.ID, &r.JobID, &r.NodeID, &r.RoomID, &r.Lane, &private, &byOwner, &r.TurnID, &r.Root, &r.Title, &r.Prompt,
		&r.State, &r.Position, &r.Error, &r.CardID, &settings, &quiet, &r.Notified, &watchdog, &created)
	if err != nil {
		return nodeRun{}, err
	}
	r.Private, r.ByOwner, r.Quiet = private == 1, byOwner == 1, quiet == 1
	json.Unmarshal([]byte(settings), &r.Settings)
	json.Unmarshal([]byte(watchdog), &r.Watchdog)
	r.CreatedAt = store.ReadTime(created)
	return r, nil
}

func (s *Service) queryRuns(ctx context.Context, db querier, where string, args ...any) ([]nodeRun, error) {
	return queryAll(ctx, db, "read runs", "SELECT "+runCols+" FROM node_runs "+where, args, scanRun)
}

func insertRunTx(tx *ledger.Tx, r nodeRun) error {
	settings, _ := json.Marshal(r.Settings)
	_, err := tx.ExecContext(tx.Context(), `INSERT INTO node_runs (id, job_id, node_id, room_id, lane, private, by_owner, turn_id,
		session_root, title, prompt, state, position, card_message_id, settings, quiet, created_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 0, ?)`,
		r.ID, nullable(r.JobID), r.NodeID, r.RoomID, r.Lane, b2i(r.Private), b2i(r.ByOwner), r.TurnID, r.Root, r.Title, r.Prompt,
		r.State, r.Position, nullable(r.CardID), string(settings), store.Stamp(tx.Now()))
	if err != nil {
		return fmt.Errorf("node: record a run: %w", err)
	}
	return nil
}

// origin is who acts on a session and where its runs report: a node's turn, or the owner on the
// card acting as the session's node.
type origin struct {
	node         Node
	roomID, lane string
	turnID       string
	private      bool
	byOwner      bool
	who, source  string // owner|node|watchdog, card|chat|watchdog
	depth        int
}

func (o origin) actor() ledger.Actor {
	if o.who == "owner" {
		return ledger.Actor{Kind: ledger.Person}
	}
	return ledger.Actor{Kind: ledger.Node, ID: o.node.ID, Name: o.node.Name}
}

func turnOrigin(c *turnCtx) origin {
	t := c.rt.turn
	room, lane, private := c.room.ID, t.Lane, t.Private
	if !isConvLane(t.Lane) && t.ReportTo != nil {
		room, lane, private = t.ReportTo.RoomID, t.ReportTo.Lane, t.ReportTo.Private
	}
	return origin{node: c.node, roomID: room, lane: lane, turnID: t.ID, private: private, byOwner: t.ByOwner,
		who: "node", source: "chat", depth: t.Depth}
}

var errSessionGone = problem.New(problem.KindNotFound, "That session is not one of yours; node_sessions lists them.")

// sessionRoot finds the session ref names (its id, or any of its runs' or jobs' ids).
func (s *Service) sessionRoot(ctx context.Context, db querier, ref string) (string, error) {
	ref = strings.TrimSpace(ref)
	if ref == "" {
		return "", problem.Invalid("Name the session (its id, from node_sessions).")
	}
	var root string
	err := db.QueryRowContext(ctx, "SELECT session_root FROM node_runs WHERE id = ? OR job_id = ? OR session_root = ? LIMIT 1", ref, ref, ref).Scan(&root)
	if err == nil {
		return root, nil
	}
	if !errors.Is(err, sql.ErrNoRows) {
		return "", err
	}
	err = db.QueryRowContext(ctx, "SELECT session_root FROM node_session_events WHERE session_root = ? LIMIT 1", ref).Scan(&root)
	if err == nil {
		return root, nil
	}
	if s.cfg.Sessions != nil {
		if d, err := s.cfg.Sessions.Get(ctx, ref); err == nil && d.DeletedAt == nil {
			return d.ID, nil
		}
	}
	return "", problem.NotFound("There is no session %q.", ref)
}

// sessionOwner is the node a session belongs to: the node it was last adopted by or handed to,
// else the node of its first run; "" for a session no node manages.
func sessionOwner(ctx context.Context, db querier, root string) (string, error) {
	var id string
	err := db.QueryRowContext(ctx, "SELECT node_id FROM node_session_events WHERE session_root = ? AND kind = 'adopt' ORDER BY created_at DESC, rowid DESC LIMIT 1", root).Scan(&id)
	if err == nil {
		return id, nil
	}
	if !errors.Is(err, sql.ErrNoRows) {
		return "", err
	}
	err = db.QueryRowContext(ctx, "SELECT node_id FROM node_runs WHERE session_root = ? ORDER BY created_at, rowid LIMIT 1", root).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	return id, err
}

// ownSession is the session ref names when it belongs to nodeID; another node's, or none's, is
// refused as not found, so a node never learns of another's sessions.
func (s *Service) ownSession(ctx context.Context, db querier, nodeID, ref string) (string, error) {
	root, err := s.sessionRoot(ctx, db, ref)
	if err != nil {
		return "", errSessionGone
	}
	owner, err := sessionOwner(ctx, db, root)
	if err != nil {
		return "", err
	}
	if owner != nodeID {
		return "", errSessionGone
	}
	if err := s.refuseDeleted(ctx, root); err != nil {
		return "", err
	}
	return root, nil
}

// refuseDeleted refuses a session deleted in Ensemble: it is never continued.
func (s *Service) refuseDeleted(ctx context.Context, root string) error {
	if s.cfg.Sessions == nil {
		return nil
	}
	if d, err := s.cfg.Sessions.Get(ctx, root); err == nil && d.DeletedAt != nil {
		return problem.Conflict("That session was deleted in Ensemble; start a new one with node_session_start.")
	}
	return nil
}

func sessionEventTx(tx *ledger.Tx, root, nodeID, kind string, o origin, runID, detail string) error {
	who, source := o.who, o.source
	if who == "" {
		who = "node"
	}
	if source == "" {
		source = "chat"
	}
	_, err := tx.ExecContext(tx.Context(), `INSERT INTO node_session_events (id, session_root, node_id, kind, who, source, run_id, detail, created_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`, ledger.NewID("nse_"), root, nodeID, kind, who, source, runID, detail, store.Stamp(tx.Now()))
	if err != nil {
		return fmt.Errorf("node: record a session event: %w", err)
	}
	return nil
}

// SessionEvent is one line of a session's work board.
type SessionEvent struct {
	Kind      string    `json:"kind"`
	NodeID    string    `json:"nodeId"`
	Who       string    `json:"who"`
	Source    string    `json:"source"`
	RunID     string    `json:"runId,omitempty"`
	Detail    string    `json:"detail,omitempty"`
	CreatedAt time.Time `json:"createdAt"`
}

// SessionEvents are what happened to a session, oldest first.
func (s *Service) SessionEvents(ctx context.Context, root string) ([]SessionEvent, error) {
	rows, err := s.cfg.Store.Reader().QueryContext(ctx, "SELECT kind, node_id, who, source, run_id, detail, created_at FROM node_session_events WHERE session_root = ? ORDER BY created_at, rowid", root)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []SessionEvent
	for rows.Next() {
		var e SessionEvent
		var at string
		if err := rows.Scan(&e.Kind, &e.NodeID, &e.Who, &e.Source, &e.RunID, &e.Detail, &at); err != nil {
			return nil, err
		}
		e.CreatedAt = store.ReadTime(at)
		out = append(out, e)
	}
	return out, rows.Err()
}

// RunRequest is a new session's first run, as node_session_start asks for it.
type RunRequest struct {
	Title      string `json:"title"`
	Prompt     string `json:"prompt"`
	TaskID     string `json:"taskId,omitempty"`
	Agent      string `json:"agent,omitempty"`
	Folder     string `json:"folder,omitempty"`
	RepoURL    string `json:"repoUrl,omitempty"`
	Model      string `json:"model,omitempty"`
	Effort     string `json:"effort,omitempty"`
	Context    string `json:"context,omitempty"`
	Profile    string `json:"profile,omitempty"`
	NewSession bool   `json:"newSession,omitempty"`
	// check only plans the run and looks for fits: it starts nothing, and the job it returns
	// holds the agent and folder the run would get.
	check bool
}

// SessionFit is an existing session a new run would fit (spec 002 §8.2).
type SessionFit struct {
	Session string `json:"session"`
	Did     string `json:"did"`
	Why     string `json:"why"`
}

var errNoJobs = errors.New("No coding agents run in this Ensemble, so this node cannot start agent sessions here.")

// startSession starts a new session: its first run, its node_runs row and its card, in one
// transaction. Without NewSession it first looks for one of the node's own sessions that fits
// and, finding one, starts nothing and returns the fits.
func (s *Service) startSession(ctx context.Context, o origin, in RunRequest) (jobs.Job, []SessionFit, error) {
	if s.cfg.Jobs == nil {
		return jobs.Job{}, nil, errNoJobs
	}
	if err := s.refuseWhilePaused(ctx, o.node.ID); err != nil {
		return jobs.Job{}, nil, err
	}
	req := jobs.AssignRequest{Title: strings.TrimSpace(in.Title), Brief: strings.TrimSpace(in.Prompt), TaskID: strings.TrimSpace(in.TaskID),
		Agent: strings.TrimSpace(in.Agent), Folder: strings.TrimSpace(in.Folder), RepoURL: strings.TrimSpace(in.RepoURL),
		NewSession: true, Actor: o.actor()}
	if req.TaskID != "" {
		req.Title = ""
	}
	requested := SettingSet{Agent: req.Agent, Model: in.Model, Effort: in.Effort, Context: in.Context}
	requested.into(&req.Settings)
	if err := s.underProfile(ctx, &req, strings.TrimSpace(in.Profile)); err != nil {
		return jobs.Job{}, nil, err
	}
	s.withSavedSecrets(ctx, &req, o.roomID)
	if s.cfg.Runs != nil {
		if err := s.cfg.Runs.CheckAgent(ctx, req.Agent); err != nil {
			return jobs.Job{}, nil, err
		}
	}
	if req.Settings.Model != nil {
		var ready func(context.Context, string) error
		if s.cfg.Runs != nil {
			ready = s.cfg.Runs.CheckAgent
		}
		if err := modelFit(ctx, req.Agent, *req.Settings.Model, ready); err != nil {
			return jobs.Job{}, nil, err
		}
	}
	if !in.NewSession && req.RepoURL == "" {
		fits, err := s.fits(ctx, o.node.ID, req)
		if err != nil {
			return jobs.Job{}, nil, err
		}
		if len(fits) > 0 {
			return jobs.Job{}, fits, nil
		}
	}
	if in.check {
		return jobs.Job{Agent: req.Agent, WorkDir: req.Folder, Folder: req.Folder}, nil, nil
	}
	title := in.Title
	req.Within = func(tx *ledger.Tx, j jobs.Job) error {
		r := nodeRun{ID: ledger.NewID("nrn_"), JobID: j.ID, NodeID: o.node.ID, RoomID: o.roomID, Lane: o.lane, Private: o.private,
			ByOwner: o.byOwner, TurnID: o.turnID, Root: j.ID, Title: title, Prompt: req.Brief, State: runStarted,
			Settings: RunSettings{Requested: requested, Resolved: resolvedOf(j)}}
		return s.startedTx(tx, o, r, j)
	}
	j, err := s.cfg.Jobs.Assign(ctx, req)
	if err != nil {
		return jobs.Job{}, nil, err
	}
	s.refreshSession(ctx, j.ID)
	return j, nil, nil
}

// underProfile fills what the run leaves out from the node's run profile (the one named, else
// the owner's default), as hub_assign_to_agent does.
func (s *Service) underProfile(ctx context.Context, req *jobs.AssignRequest, ref string) error {
	pp, ok := s.cfg.Runs.(tools.ProfilePicker)
	if !ok {
		if ref != "" {
			return problem.Invalid("This Ensemble keeps no run profiles; start the session without one.")
		}
		return nil
	}
	p, found, err := pp.PickProfile(ctx, ref)
	if err != nil || !found {
		return err
	}
	*req = p.Fill(*req)
	return nil
}

// startedTx records a run whose job was just made, posts its card and notes the event.
func (s *Service) startedTx(tx *ledger.Tx, o origin, r nodeRun, j jobs.Job) error {
	card, err := s.postRunCardTx(tx, r, j)
	if err != nil {
		return err
	}
	r.CardID = card.ID
	if err := insertRunTx(tx, r); err != nil {
		return err
	}
	return nil
}

// resolvedOf is what the agent was sent (spec 002 §8.10).
func resolvedOf(j jobs.Job) SettingSet {
	set := SettingSet{Agent: j.Agent, Model: j.Settings.Model, Effort: j.Settings.Effort, Context: j.Settings.ContextTier}
	if set.Model == "" {
		set.Model = "default"
	}
	if set.Effort == "" {
		set.Effort = "default"
	}
	if set.Context == "" {
		set.Context = "default"
	}
	fast := j.Settings.Fast
	set.Fast = &fast
	return set
}

// observedOf is what the agent reported it runs with; what it did not is "not_reported".
func observedOf(j jobs.Job) SettingSet {
	set := SettingSet{Agent: j.Agent, Model: j.Observed.Model, Effort: j.Observed.Effort, Context: "not_reported"}
	if j.Model != "" && set.Model == "" {
		set.Model = j.Model
	}
	if set.Model == "" {
		set.Model = "not_reported"
	}
	if set.Effort == "" {
		set.Effort = "not_reported"
	}
	if j.Observed.ContextTokens > 0 {
		set.Context = fmt.Sprint(j.Observed.ContextTokens)
	}
	return set
}

// inputOf is a run's settings as a request for the next run of its session: each one kept.
func inputOf(st jobs.Settings) jobs.SettingsInput {
	mode, outside, git := string(st.Mode), string(st.Outside), string(st.Git)
	in := jobs.SettingsInput{Mode: &mode, Trusted: &st.Trusted, Sandbox: &st.Sandbox, Outside: &outside, Git: &git,
		AskBeforeCommit: &st.AskBeforeCommit, Internet: &st.Internet, MaxMinutes: &st.MaxMinutes, MaxTurns: &st.MaxTurns,
		Fast: &st.Fast}
	if st.Model != "" {
		in.Model = &st.Model
	}
	if st.Effort != "" {
		in.Effort = &st.Effort
	}
	if st.ContextTier != "" {
		in.ContextTier = &st.ContextTier
	}
	if len(st.Secrets) > 0 {
		names := slices.Clone(st.Secrets)
		in.Secrets = &names
	}
	return in
}

func (s *Service) refuseWhilePaused(ctx context.Context, nodeID string) error {
	n, err := s.Node(ctx, nodeID)
	if err != nil {
		return err
	}
	if n.Paused() {
		return problem.Conflict("@%s is paused; it starts no work on the computer until it is resumed.", n.Slug)
	}
	return nil
}

// fits are the node's own sessions a new run fits, by the session scorer (spec 002 §8.2).
func (s *Service) fits(ctx context.Context, nodeID string, req jobs.AssignRequest) ([]SessionFit, error) {
	if s.cfg.Sessions == nil || req.Agent == "" {
		return nil, nil
	}
	choice, err := s.cfg.Sessions.Choose(ctx, jobs.ChoiceInput{Agent: req.Agent, Folder: req.Folder, TaskID: req.TaskID,
		Title: req.Title, Brief: req.Brief})
	if err != nil || choice.Continue == "" {
		return nil, nil
	}
	db := s.cfg.Store.Reader()
	root, err := s.sessionRoot(ctx, db, choice.Continue)
	if err != nil {
		return nil, nil
	}
	if owner, err := sessionOwner(ctx, db, root); err != nil || owner != nodeID {
		return nil, nil
	}
	did := ""
	if d, err := s.cfg.Sessions.Get(ctx, root); err == nil {
		did = fmt.Sprintf("“%s”: %s", d.LatestTask.Title, d.Summary)
	}
	return []SessionFit{{Session: root, Did: did, Why: choice.Text}}, nil
}

// moveSession gives a session to a node: an adopt event on it (spec 002 §8.9 Handing over).
func (s *Service) moveSession(ctx context.Context, o origin, root, from, to string) error {
	return s.cfg.Writer.Exec(ctx, func(tx *ledger.Tx) error {
		owner, err := sessionOwner(tx.Context(), tx, root)
		if err != nil {
			return err
		}
		if owner != from {
			if from == "" {
				return problem.Conflict("That session is already managed by a node.")
			}
			return errSessionGone
		}
		return sessionEventTx(tx, root, to, "adopt", o, "", "from "+from)
	})
}

// pauseRunsTx takes a pausing node's agent work over (spec 002 §8.5): its queued session messages
// are taken out and its runs not ended are marked quiet, to be stopped by stopNodeRuns once the
// pause is saved. It returns the titles of the runs going on and how many messages it took out.
func (s *Service) pauseRunsTx(tx *ledger.Tx, nodeID string) (running []string, dropped int, err error) {
	if s.cfg.Jobs == nil {
		return nil, 0, nil
	}
	ctx := tx.Context()
	res, err := tx.ExecContext(ctx, "UPDATE node_runs SET state = 'cancelled', quiet = 1, error = 'the node was paused' WHERE node_id = ? AND state = 'queued'", nodeID)
	if err != nil {
		return nil, 0, err
	}
	n, _ := res.RowsAffected()
	live, err := s.goingRuns(ctx, tx, nodeID)
	if err != nil {
		return nil, 0, err
	}
	for _, r := range live {
		if _, err := tx.ExecContext(ctx, "UPDATE node_runs SET quiet = 1 WHERE id = ?", r.ID); err != nil {
			return nil, 0, err
		}
		running = append(running, "“"+r.Title+"”")
	}
	return running, int(n), nil
}

// stopNodeRuns stops every run a paused node started that has not ended.
func (s *Service) stopNodeRuns(ctx context.Context, nodeID string) {
	if s.cfg.Jobs == nil {
		return
	}
	live, err := s.goingRuns(ctx, s.cfg.Store.Reader(), nodeID)
	if err != nil {
		return
	}
	roots := map[string]bool{}
	for _, r := range live {
		if _, err := s.cfg.Jobs.Stop(ctx, r.JobID); err != nil && problem.KindOf(err) != problem.KindConflict {
			s.log.Warn("node: stop a paused node's run", "job", r.JobID, "err", err)
		}
		roots[r.Root] = true
	}
	for root := range roots {
		s.refreshSession(ctx, root)
	}
}
