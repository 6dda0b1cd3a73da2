// Package sessions holds agent sessions: the conversations with a coding agent that runs carry on
// from each other. A session is derived from the runs, not stored: the chain of runs that continue
// each other (jobs.Job.Continues) with the same agent. Its id is its first run's id and its agent
// session is the newest one its runs recorded. What is stored is which sessions were deleted in
// Ensemble (never reopened), each automatic session choice, and when the clean-up looks again.
//
// # Choosing a session
//
// [Service.Choose] is the hook jobs.Assign calls for a run that names no session: it scores the
// agent's idle sessions against the new task with [Score] and [Decide], pure functions of stored
// signals, and continues the best one when it is confident. No model takes part: the same records
// always give the same decision.
//
// # Clean-up
//
// [Service.Sweep] runs every 15 minutes and marks deleted a session whose every task is retired.
//
// # At the agent
//
// A session deleted here is deleted at its agent too ([Service.DeleteOwed]: Claude Code's
// transcript, the Codex thread, the OpenCode or Gemini CLI session), right after, and again at
// each start and every half hour while it is owed.
package sessions

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/ensemblework/ensemble/runtime/events"
	"log/slog"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/ensemblework/ensemble/engines"
	"github.com/ensemblework/ensemble/runtime/jobs"
	"github.com/ensemblework/ensemble/runtime/ledger"
	"github.com/ensemblework/ensemble/runtime/needs"
	"github.com/ensemblework/ensemble/runtime/problem"
	"github.com/ensemblework/ensemble/runtime/records"
	"github.com/ensemblework/ensemble/runtime/store"
)

// Status is what a session is doing.
type Status string

const (
	Working Status = "working" // a run is going
	Waiting Status = "waiting" // a run waits for the person (Needs me, or paused)
	Queued  Status = "queued"  // a run waits for its folder
	Idle    Status = "idle"
)

// Statuses lists what a session can be doing.
func Statuses() []Status { return []Status{Working, Waiting, Queued, Idle} }

// Session is one conversation with a coding agent, across the runs that continue each other.
type Session struct {
	ID           string     `json:"id"` // its first run
	Agent        string     `json:"agent"`
	Model        string     `json:"model,omitempty"`
	Folder       string     `json:"folder"` // where its newest run works
	FolderKind   string     `json:"folderKind"`
	AgentSession string     `json:"agentSession,omitempty"` // the agent's own session id, the newest recorded
	FirstTask    TaskRef    `json:"firstTask"`
	LatestTask   TaskRef    `json:"latestTask"`
	Summary      string     `json:"summary"` // one line: the latest report
	Status       Status     `json:"status"`
	Resumable    bool       `json:"resumable"`
	LastRun      string     `json:"lastRun"` // the run a continuation continues
	RunCount     int        `json:"runCount"`
	TaskCount    int        `json:"taskCount"`
	CreatedAt    time.Time  `json:"createdAt"`
	LastActive   time.Time  `json:"lastActive"`
	DeletedAt    *time.Time `json:"deletedAt,omitempty"`
	DeletedWhy   string     `json:"deletedWhy,omitempty"` // person, retired
}

// TaskRef names a task.
type TaskRef struct {
	ID    string `json:"id"`
	Title string `json:"title"`
}

// Run is one run of a session, oldest first.
type Run struct {
	ID        string     `json:"id"`
	TaskID    string     `json:"taskId"`
	Title     string     `json:"title"`
	Status    string     `json:"status"`
	Session   string     `json:"agentSession,omitempty"`
	Continues string     `json:"continues,omitempty"`
	Summary   string     `json:"summary"`
	CreatedAt time.Time  `json:"createdAt"`
	EndedAt   *time.Time `json:"endedAt"`
}

// Detail is a session with its runs.
type Detail struct {
	Session
	Runs []Run `json:"runs"`
}

// Filter narrows List.
type Filter struct {
	TaskID string // sessions with a run of this task
	Q      string // words in its tasks' titles, summary, agent or folder
	Limit  int    // 1 to 200; 50 when 0
}

// Options configure a Service.
type Options struct {
	Store   *store.Store
	Writer  *ledger.Writer
	DataDir string // sessions.json, the config's overrides, is read from here; "" for the defaults
	Log     *slog.Logger
	Now     func() time.Time
	// Drivers delete a deleted session's own copy at its agent (engines.SessionDeleter), keyed by
	// agent; without them the deletions stay owed.
	Drivers map[string]engines.Driver
}

// Service derives sessions, deletes them, chooses them for new runs and cleans them up.
type Service struct {
	opts   Options
	db     *sql.DB
	w      *ledger.Writer
	log    *slog.Logger
	cfg    *configFile
	corpus corpusCache
	feats  featureCache

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
	kick   chan struct{} // wakes the deleter of sessions owed at their agents
}

var _ jobs.Sessions = (*Service)(nil)

// ConfigFile is the name of the config overrides in the data folder.
const ConfigFile = "sessions.json"

// New returns a Service; Start starts its clean-up.
func New(opts Options) *Service {
	if opts.Log == nil {
		opts.Log = slog.New(slog.DiscardHandler)
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	s := &Service{opts: opts, db: opts.Store.Reader(), w: opts.Writer, log: opts.Log, kick: make(chan struct{}, 1)}
	s.cfg = &configFile{warn: func(msg string, args ...any) { s.log.Warn(msg, args...) }}
	if opts.DataDir != "" {
		s.cfg.path = filepath.Join(opts.DataDir, ConfigFile)
	}
	s.ctx, s.cancel = context.WithCancel(context.Background())
	return s
}

// Config is the config in force.
func (s *Service) Config() Config { return s.cfg.get(s.opts.Now()) }

// runRow is a run as sessions read it.
type runRow struct {
	id, task, agent, status, workDir, folderKind string
	session, continues, model, summary           string
	changes                                      string
	created, active                              time.Time
	ended                                        *time.Time
}

// chain is a session as derived, before it is described.
type chain struct {
	id      string
	runs    []*runRow // oldest first
	deleted *deletion
}

type deletion struct {
	at  time.Time
	why string
}

type taskRow struct {
	id, title, status, labels, page string
	project                         *string
	updated                         time.Time
	deleted                         *time.Time
}

// world is everything derivation reads, at once.
type world struct {
	chains  []*chain // oldest first
	byRun   map[string]*chain
	tasks   map[string]*taskRow
	waiting map[string]bool // runs with an open question
}

// load derives every session.
func (s *Service) load(ctx context.Context) (*world, error) {
	lines, err := jobs.RunLines(ctx, s.db)
	if err != nil {
		return nil, fmt.Errorf("sessions: %w", err)
	}
	all := make([]*runRow, len(lines))
	for i, l := range lines {
		all[i] = &runRow{id: l.ID, task: l.TaskID, agent: l.Agent, status: string(l.Status), workDir: l.WorkDir,
			folderKind: l.FolderKind, session: l.SessionID, continues: l.Continues, model: l.Model,
			summary: l.Summary, changes: l.Changes, created: l.CreatedAt, active: l.ActiveAt, ended: l.EndedAt}
	}
	dels := map[string]*deletion{}
	if err := s.each(ctx, `SELECT session_id, deleted_at, reason FROM session_deletions`, func(r *sql.Rows) error {
		var id, at, why string
		if err := r.Scan(&id, &at, &why); err != nil {
			return err
		}
		dels[id] = &deletion{at: store.ReadTime(at), why: why}
		return nil
	}); err != nil {
		return nil, err
	}
	w := &world{byRun: map[string]*chain{}, tasks: map[string]*taskRow{}, waiting: map[string]bool{}}
	byID := map[string]*runRow{}
	for _, r := range all {
		byID[r.id] = r
		var c *chain
		if p := byID[r.continues]; p != nil && p.agent == r.agent {
			// A run continuing a session deleted before it was made starts a session of its own.
			if pc := w.byRun[p.id]; pc.deleted == nil || r.created.Before(pc.deleted.at) {
				c = pc
			}
		}
		if c == nil {
			c = &chain{id: r.id, deleted: dels[r.id]}
			w.chains = append(w.chains, c)
		}
		c.runs = append(c.runs, r)
		w.byRun[r.id] = c
	}
	taskIDs := make([]string, 0, len(all))
	for _, r := range all {
		if !slices.Contains(taskIDs, r.task) {
			taskIDs = append(taskIDs, r.task)
		}
	}
	heads, err := records.TaskHeads(ctx, s.db, taskIDs, 4000)
	if err != nil {
		return nil, fmt.Errorf("sessions: %w", err)
	}
	for _, h := range heads {
		w.tasks[h.ID] = &taskRow{id: h.ID, title: h.Title, status: h.Status, labels: h.LabelsJSON, page: h.Page,
			project: h.ProjectID, updated: h.UpdatedAt, deleted: h.DeletedAt}
	}
	waiting, err := needs.WaitingRuns(ctx, s.db)
	if err != nil {
		return nil, fmt.Errorf("sessions: %w", err)
	}
	for _, id := range waiting {
		w.waiting[id] = true
	}
	return w, nil
}

func (s *Service) each(ctx context.Context, q string, fn func(*sql.Rows) error) error {
	rows, err := s.db.QueryContext(ctx, q)
	if err != nil {
		return fmt.Errorf("sessions: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		if err := fn(rows); err != nil {
			return fmt.Errorf("sessions: %w", err)
		}
	}
	return rows.Err()
}

// describe makes a chain's Session.
func (w *world) describe(c *chain) Session {
	first, last := c.runs[0], c.runs[len(c.runs)-1]
	ss := Session{ID: c.id, Agent: first.agent, Folder: last.workDir, FolderKind: last.folderKind,
		RunCount: len(c.runs), CreatedAt: first.created, Status: Idle}
	tasks := map[string]bool{}
	going := map[Status]bool{}
	for _, r := range c.runs {
		tasks[r.task] = true
		if r.active.After(ss.LastActive) {
			ss.LastActive = r.active
		}
		if r.model != "" {
			ss.Model = r.model
		}
		if r.session != "" {
			ss.AgentSession, ss.LastRun = r.session, r.id
		}
		switch {
		case w.waiting[r.id] || r.status == string(jobs.Paused):
			going[Waiting] = true
		case r.status == string(jobs.Running):
			going[Working] = true
		case r.status == string(jobs.Queued):
			going[Queued] = true
		}
	}
	for _, st := range []Status{Waiting, Working, Queued} {
		if going[st] {
			ss.Status = st
			break
		}
	}
	ss.TaskCount = len(tasks)
	ss.FirstTask, ss.LatestTask = w.taskRef(first.task), w.taskRef(last.task)
	for i := len(c.runs) - 1; i >= 0; i-- {
		if c.runs[i].summary != "" {
			ss.Summary = oneLine(c.runs[i].summary, 160)
			break
		}
	}
	if c.deleted != nil {
		at := c.deleted.at
		ss.DeletedAt, ss.DeletedWhy = &at, c.deleted.why
	}
	ss.Resumable = c.deleted == nil && ss.AgentSession != ""
	return ss
}

func (w *world) taskRef(id string) TaskRef {
	ref := TaskRef{ID: id}
	if t := w.tasks[id]; t != nil {
		ref.Title = t.title
	}
	return ref
}

// oneLine is the first non-empty line of s without Markdown headings' marks, cut to n characters.
func oneLine(s string, n int) string {
	for l := range strings.Lines(s) {
		l = strings.TrimSpace(strings.TrimLeft(strings.TrimSpace(l), "#>*- "))
		if l == "" {
			continue
		}
		if r := []rune(l); len(r) > n {
			l = strings.TrimSpace(string(r[:n-1])) + "…"
		}
		return l
	}
	return ""
}

// List returns sessions, newest activity first. Deleted sessions are listed too, marked so.
func (s *Service) List(ctx context.Context, f Filter) ([]Session, error) {
	if f.Limit <= 0 {
		f.Limit = 50
	}
	f.Limit = min(f.Limit, 200)
	w, err := s.load(ctx)
	if err != nil {
		return nil, err
	}
	q := strings.ToLower(strings.TrimSpace(f.Q))
	out := []Session{}
	for _, c := range w.chains {
		if f.TaskID != "" && !slices.ContainsFunc(c.runs, func(r *runRow) bool { return r.task == f.TaskID }) {
			continue
		}
		ss := w.describe(c)
		if q != "" && !w.matches(c, ss, q) {
			continue
		}
		out = append(out, ss)
	}
	slices.SortStableFunc(out, func(a, b Session) int {
		if c := b.LastActive.Compare(a.LastActive); c != 0 {
			return c
		}
		return strings.Compare(b.ID, a.ID)
	})
	if len(out) > f.Limit {
		out = out[:f.Limit]
	}
	return out, nil
}

// matches: every word of q is in the session's task titles, summaries, agent, model or folder.
func (w *world) matches(c *chain, ss Session, q string) bool {
	var b strings.Builder
	b.WriteString(strings.ToLower(ss.Agent + " " + ss.Model + " " + ss.Folder + " " + ss.ID))
	for _, r := range c.runs {
		b.WriteString(" " + strings.ToLower(r.summary))
		if t := w.tasks[r.task]; t != nil {
			b.WriteString(" " + strings.ToLower(t.title))
		}
	}
	text := b.String()
	for _, word := range strings.Fields(q) {
		if !strings.Contains(text, word) {
			return false
		}
	}
	return true
}

// Get returns a session with its runs. Any run id of the session finds it.
func (s *Service) Get(ctx context.Context, id string) (Detail, error) {
	w, err := s.load(ctx)
	if err != nil {
		return Detail{}, err
	}
	c := w.byRun[id]
	if c == nil {
		return Detail{}, problem.NotFound("There is no agent session with id %q.", id)
	}
	d := Detail{Session: w.describe(c), Runs: []Run{}}
	for _, r := range c.runs {
		d.Runs = append(d.Runs, Run{ID: r.id, TaskID: r.task, Title: w.taskRef(r.task).Title, Status: r.status,
			Session: r.session, Continues: r.continues, Summary: oneLine(r.summary, 300), CreatedAt: r.created, EndedAt: r.ended})
	}
	return d, nil
}

// Deleted reports whether the session the run belongs to was deleted in Ensemble.
func (s *Service) Deleted(ctx context.Context, runID string) (bool, error) {
	w, err := s.load(ctx)
	if err != nil {
		return false, err
	}
	c := w.byRun[runID]
	return c != nil && c.deleted != nil, nil
}

// KindDeleted is the event of a session deleted in Ensemble; subject the session id.
const KindDeleted events.Kind = "session.deleted"

// EventSpecs lists the sessions' kinds of event, for the catalog.
func EventSpecs() []events.Spec { return events.Specs(deletedEvent{}, KindDeleted) }

// deletedEvent is its data.
type deletedEvent struct {
	Session string `json:"session"`
	Agent   string `json:"agent"`
	Reason  string `json:"reason"` // person, retired
	Native  string `json:"native"` // owed: the agent's own copy is still to be deleted
	Text    string `json:"text"`
}

// Delete marks a session deleted: it is never reopened, and a run continuing it starts a new
// session in its folder. Its runs, folders and files stay. Deleting the agent's own copy of the
// session is recorded as owed, and carried out by [Service.DeleteOwed] soon after (tried again
// while it is owed, at each start too).
func (s *Service) Delete(ctx context.Context, id string, actor ledger.Actor) (Session, error) {
	d, err := s.Get(ctx, id)
	if err != nil {
		return Session{}, err
	}
	if d.DeletedAt != nil {
		return Session{}, problem.Conflict("This agent session was already deleted.")
	}
	if d.Status != Idle {
		return Session{}, problem.Conflict("A run of this agent session is still queued or going; stop it before deleting the session.")
	}
	if err := s.markDeleted(ctx, d.Session, "person", actor, nil); err != nil {
		return Session{}, err
	}
	s.kickNative()
	return d.Session, nil
}

// markDeleted records the deletion. guard, when set, checks again inside the transaction and
// returns errSkip to leave the session alone.
func (s *Service) markDeleted(ctx context.Context, ss Session, why string, actor ledger.Actor, guard func(*ledger.Tx) error) error {
	if actor.Kind == "" {
		actor.Kind = ledger.Person
	}
	return s.w.Exec(ctx, func(t *ledger.Tx) error {
		if guard != nil {
			if err := guard(t); err != nil {
				return err
			}
		}
		if _, err := t.ExecContext(ctx, `INSERT INTO session_deletions (session_id, last_run, agent, agent_session,
			reason, actor_kind, deleted_at) VALUES (?, ?, ?, ?, ?, ?, ?)`, ss.ID, ss.LastRun, ss.Agent, ss.AgentSession,
			why, string(actor.Kind), store.Stamp(t.Now())); err != nil {
			return fmt.Errorf("sessions: delete %s: %w", ss.ID, err)
		}
		text := "Deleted the agent session of “" + ss.FirstTask.Title + "”; it will not be reopened."
		if why == "retired" {
			text = "Deleted the agent session of “" + ss.FirstTask.Title + "”: every task in it is retired."
		}
		return t.Emit(KindDeleted, ss.ID, deletedEvent{Session: ss.ID, Agent: ss.Agent, Reason: why, Native: "owed", Text: text})
	})
}

// errSkip leaves a session alone.
var errSkip = errors.New("sessions: left alone")

// Start starts the clean-up, every cleanup.everyMinutes, and the deletion at the agents of the
// sessions deleted here.
func (s *Service) Start() {
	s.wg.Add(2)
	go s.deleteOwedLoop()
	go func() {
		defer s.wg.Done()
		for {
			every := time.Duration(s.Config().Cleanup.EveryMinutes) * time.Minute
			select {
			case <-s.ctx.Done():
				return
			case <-time.After(every):
			}
			if !s.Config().Cleanup.Enabled {
				continue
			}
			if n, err := s.Sweep(s.ctx); err != nil {
				s.log.Warn("session clean-up failed", "err", err)
			} else if n > 0 {
				s.log.Info("session clean-up", "deleted", n)
				s.kickNative()
			}
		}
	}()
}

// Close stops the clean-up.
func (s *Service) Close() {
	s.cancel()
	s.wg.Wait()
}

func jsonText(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
