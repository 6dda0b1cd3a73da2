// Package jobs runs the person's coding agents on their tasks: one run (a job) at a time per
// folder, in the folder named, a git worktree or a fresh workspace folder, with every tool call the
// agent asks about decided by the judge and what needs the person put on Needs me.
//
// # How a run flows
//
// [Service.Assign] creates the job, its settings and its first event in one transaction (and the
// task, when only a title is given). The queue starts it when its resource key (the folder's
// absolute path) is free. The run's driver starts the agent; the run is its [engines.Host]: each
// tool call goes to [judge.Decide], and an ask goes to the [Asker] and waits. Each engine event
// becomes a run event (kinds run.*, subject the job id), redacted and trimmed, appended to SQLite
// and then published. A watch stops a run that has gone quiet (stuck) or spent its minutes, and
// carries the agent's session on after a failure, three times at most. On start-up, runs that were
// going when Ensemble stopped are marked interrupted; nothing runs twice.
package jobs

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/ensemblework/ensemble/engines"
	"github.com/ensemblework/ensemble/runtime/events"
	"github.com/ensemblework/ensemble/runtime/judge"
	"github.com/ensemblework/ensemble/runtime/ledger"
	"github.com/ensemblework/ensemble/runtime/problem"
	"github.com/ensemblework/ensemble/runtime/records"
	"github.com/ensemblework/ensemble/runtime/secrets"
	"github.com/ensemblework/ensemble/runtime/store"
)

// Status is where a run stands.
type Status string

const (
	Queued      Status = "queued"      // waiting for its folder
	Running     Status = "running"     // the agent is working
	Paused      Status = "paused"      // the agent may make no new tool calls
	Done        Status = "done"        // the agent finished
	Failed      Status = "failed"      // the agent could not go on; Error says why
	Stopped     Status = "stopped"     // the person stopped it
	Stuck       Status = "stuck"       // it went quiet for too long and was stopped
	Limit       Status = "limit"       // it reached its minutes or turns limit; the work is kept
	Interrupted Status = "interrupted" // Ensemble stopped while it was going
)

// Statuses lists every status a run can be in, from waiting to its ends.
func Statuses() []Status {
	return []Status{Queued, Running, Paused, Done, Failed, Stopped, Stuck, Limit, Interrupted}
}

// Ended reports whether a run in this status is over.
func (s Status) Ended() bool {
	return s != Queued && s != Running && s != Paused
}

// FolderKind says where a run works.
type FolderKind string

const (
	FolderNamed     FolderKind = "folder"    // the folder the person named, as it is
	FolderWorktree  FolderKind = "worktree"  // a git worktree of that folder's repository, on a new branch
	FolderWorkspace FolderKind = "workspace" // a fresh folder of its own, <data>/workspace/<job id>
	FolderClone     FolderKind = "clone"     // a fresh clone of a repository URL, <data>/workspace/<job id>
)

// Job is one run of an agent on a task.
type Job struct {
	ID          string        `json:"id"`
	TaskID      string        `json:"taskId"`
	Agent       string        `json:"agent"`
	Brief       string        `json:"brief"`
	Status      Status        `json:"status"`
	Settings    Settings      `json:"settings"`
	FolderKind  FolderKind    `json:"folderKind"`
	Folder      string        `json:"folder"`  // the folder named ("" for the workspace)
	WorkDir     string        `json:"workDir"` // where the agent works
	Branch      string        `json:"branch,omitempty"`
	ResourceKey string        `json:"resourceKey"`
	SessionID   string        `json:"sessionId,omitempty"`
	Continues   string        `json:"continues,omitempty"` // the earlier run whose session this one continues
	Resume      string        `json:"-"`                   // that run's session
	Model       string        `json:"model,omitempty"`
	Observed    Observed      `json:"observed"` // the settings the agent reported, beside Settings
	Summary     string        `json:"summary"`
	Report      *Report       `json:"report,omitempty"` // the agent's own, through report_result
	BaseCommit  string        `json:"baseCommit,omitempty"`
	Changes     []FileChange  `json:"changes"` // the files the run changed, once it ended
	Error       string        `json:"error,omitempty"`
	Usage       engines.Usage `json:"usage"`
	Turns       int           `json:"turns"`
	Steps       int           `json:"steps"`
	Attempts    int           `json:"attempts"`
	Kept        judge.Kept    `json:"kept"`
	CreatedAt   time.Time     `json:"createdAt"`
	StartedAt   *time.Time    `json:"startedAt"`
	EndedAt     *time.Time    `json:"endedAt"`
	UpdatedAt   time.Time     `json:"updatedAt"`
}

// AssignRequest asks for a run: of an existing task (TaskID) or of a new one (Title).
type AssignRequest struct {
	TaskID string `json:"taskId,omitempty"`
	Title  string `json:"title,omitempty"`
	// Brief is what the agent is told to do; it defaults to the task's title and page.
	Brief string `json:"brief,omitempty"`
	Agent string `json:"agent"`
	// Folder is an absolute path; Worktree works in a git worktree of its repository instead.
	// Without a folder the run gets a fresh workspace folder.
	Folder   string        `json:"folder,omitempty"`
	Worktree bool          `json:"worktree,omitempty"`
	RepoURL  string        `json:"repoUrl,omitempty"` // not yet: cloning a repository as the run folder
	Settings SettingsInput `json:"settings"`
	// Continue is an earlier run whose agent session this run continues: in its folder, with its
	// agent, resuming its conversation. The agent and folder default to that run's.
	Continue string `json:"continue,omitempty"`
	// NewSession starts a new agent session: no earlier session is chosen for the run.
	NewSession bool `json:"newSession,omitempty"`
	// Actor is who assigns (the person, the assistant, a node); it creates the task when there is one to create.
	Actor ledger.Actor `json:"-"`
	// Within runs inside the transaction that saves the run, so a caller's own record of the
	// assignment (the assistant marking a held write applied) lands with the run or not at all;
	// its error saves nothing and starts nothing.
	Within func(t *ledger.Tx, j Job) error `json:"-"`
}

// Asker puts what needs the person on Needs me and waits for the answer. runtime/needs implements
// it; a cancelled ctx withdraws the question.
type Asker interface {
	Ask(ctx context.Context, q Question) (Reply, error)
}

// Withdrawer is implemented by an Asker that can withdraw a run's open questions when the run
// ends (runtime/needs: WithdrawRun), so no card waits for a run that is gone.
type Withdrawer interface {
	WithdrawRun(ctx context.Context, runID string) (int, error)
}

// QuestionKind says what a question is.
type QuestionKind string

const (
	// Approval is a tool call the judge asks about; Options are [ApprovalOptions].
	Approval QuestionKind = "approval"
	// AgentQuestion is a question from the agent, with its own options.
	AgentQuestion QuestionKind = "question"
)

// Question is something a run needs the person for.
type Question struct {
	Kind        QuestionKind `json:"kind"`
	RunID       string       `json:"runId"`
	TaskID      string       `json:"taskId"`
	Agent       string       `json:"agent"`
	Title       string       `json:"title"`   // the task's title, which the person recognises
	Text        string       `json:"text"`    // one sentence: what is asked, and why
	Options     []string     `json:"options"` // the choices
	Recommended int          `json:"recommended"`
	// Why is one line saying why Recommended is the careful choice (approvals: from the judge's verdict).
	Why      string `json:"why,omitempty"`
	FreeText bool   `json:"freeText"`
	// Unattended is a question from a run in Run unattended: Needs me answers it at once with the
	// recommended option (with none, that no one is there to answer) and keeps it, answered by
	// the run, so it is still listed with the run and its task.
	Unattended bool `json:"unattended,omitempty"`
	// For approvals: the call as the agent made it (redacted, trimmed) and the judge's verdict,
	// which says what it would touch and what "for this run" would keep.
	Tool    string         `json:"tool,omitempty"`
	Input   string         `json:"input,omitempty"`
	Verdict *judge.Verdict `json:"verdict,omitempty"`
	// SignIn is a question that is a sign-in or a human check in one of the run's tabs, held for
	// the person: where they ask it, they can open that tab's clean browser.
	SignIn *TabSignIn `json:"signIn,omitempty"`
}

// TabSignIn is the run's tab a sign-in waits in.
type TabSignIn struct {
	Tab     string `json:"tab"`
	Site    string `json:"site"`
	Purpose string `json:"purpose"` // sign_in or human_check
}

// Reply is the person's answer: the option chosen (-1 for free text) and its text.
type Reply struct {
	Option int    `json:"option"`
	Text   string `json:"text"`
}

// The options of an approval, by index.
const (
	AllowOnce   = 0
	AllowForRun = 1
	Deny        = 2
)

// ApprovalOptions are the choices of every approval.
var ApprovalOptions = []string{"Allow once", "Allow for this run", "Deny"}

// Timing holds the watch's durations, settable for tests.
type Timing struct {
	Quiet     time.Duration   // stuck after this long without a sign of life (10 min)
	QuietTool time.Duration   // … while one tool call runs (60 min)
	Retries   []time.Duration // waits before carrying on after a failure (15 s, 1 min, 2 min)
	Tick      time.Duration   // how often the watch looks (1 s)
	Minute    time.Duration   // one minute of the minutes limit (a minute; shorter in tests)
	Progress  time.Duration   // how often ask_person tells a waiting agent it still waits (30 s)
	Live      time.Duration   // how often a run's live picture is taken while it uses a tab (3 s)
}

// DefaultTiming is the spec's watch.
func DefaultTiming() Timing {
	return Timing{Quiet: 10 * time.Minute, QuietTool: 60 * time.Minute,
		Retries: []time.Duration{15 * time.Second, time.Minute, 2 * time.Minute}, Tick: time.Second,
		Progress: 30 * time.Second, Live: liveEvery}
}

// Options configure a Service.
type Options struct {
	Store   *store.Store
	Writer  *ledger.Writer // the runtime's one writer
	Records *records.Service
	// Drivers are the agents there are, by name.
	Drivers map[string]engines.Driver
	// Asker is Needs me; nil refuses what would need the person, saying why.
	Asker Asker
	// SecretHTTP makes a run's secret_http call (runtime/secrets' Store.HTTP); nil leaves the
	// tool off the run's MCP server.
	SecretHTTP func(ctx context.Context, req secrets.HTTPRequest, by string) (secrets.HTTPAnswer, error)
	DataDir    string // Ensemble's data folder: workspace and worktrees live under it
	Home       string // the person's home folder; os.UserHomeDir when empty
	// Ready says whether an agent can run now (installed, signed in); nil skips the check.
	Ready func(ctx context.Context, agent string) error
	// Models is the catalog an agent reported (detection); a run's thinking level, context window
	// and fast mode are checked against it. nil skips the check.
	Models func(ctx context.Context, agent string) []engines.ModelInfo
	// MCPURL is where the runtime serves runs their own MCP server ([Service.MCPHandler]); empty,
	// runs get none.
	MCPURL string
	// Sessions says which sessions were deleted and chooses one for a run that names none; nil,
	// no session is chosen and every session can be continued.
	Sessions Sessions
	// Context answers a run's ensemble_context and ensemble_search (the context bridge's code);
	// nil, runs have neither tool.
	Context RunContext
	// Secrets are the saved secrets a run may get in its environment and sign git in with
	// (runsecrets.go); nil, runs get none.
	Secrets RunSecrets
	// GitHelper is git's credential.helper for a run with the run's own git token, calling
	// POST /api/engine/git-credential on this runtime ("!'…/ensemble' git-credential …"); nil,
	// git signs in with no saved secret.
	GitHelper func(token string) string
	// Hide hides the values of the secrets kept on this computer, which no shape finds, in
	// everything a run records (trace, summary, report, questions); nil hides none.
	Hide func(string) string
	// Browser is the Chromium broker a run's browser and capture tools use (browsertools.go);
	// nil, runs have only capture_status, which says so. RefuseURL is why an address is
	// Ensemble itself (its own UI, its relay), or "".
	Browser   Browser
	RefuseURL func(url string) string
	// SiteRule is the person's rule for capturing a site (a host): SiteNever (no screenshot, no
	// live picture), SitePreview (held for their preview) or ""; nil, none.
	SiteRule func(ctx context.Context, site string) string
	// Bus carries what is live only and never kept: a run's live picture changed (KindLive).
	Bus    *events.Bus
	Log    *slog.Logger
	Timing Timing // zero fields take DefaultTiming's
	Now    func() time.Time
}

// Service runs jobs.
type Service struct {
	opts Options
	db   *sql.DB // reads
	w    *ledger.Writer
	rec  *records.Service
	log  *slog.Logger

	ctx    context.Context // ends when the service closes
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu      sync.Mutex // guards the following fields
	started bool
	closed  bool
	q       *queue
	keys    map[string]string // job id → resource key, for every job in the queue
	runs    map[string]*run   // the jobs going
	secrets map[string]*run   // by the hash of their MCP server's secret
	gitKeys map[string]*run   // by the hash of their git token (runsecrets.go)

	liveMu sync.Mutex
	live   map[string]LivePicture // by job id: the runs' latest live pictures (livepicture.go)
}

// New returns a Service. Call Start to recover from the last shutdown and start queued runs.
func New(opts Options) *Service {
	d := DefaultTiming()
	t := &opts.Timing
	if t.Quiet == 0 {
		t.Quiet = d.Quiet
	}
	if t.QuietTool == 0 {
		t.QuietTool = d.QuietTool
	}
	if t.Retries == nil {
		t.Retries = d.Retries
	}
	if t.Tick == 0 {
		t.Tick = d.Tick
	}
	if t.Progress == 0 {
		t.Progress = d.Progress
	}
	if t.Live == 0 {
		t.Live = d.Live
	}
	if opts.Log == nil {
		opts.Log = slog.New(slog.DiscardHandler)
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Home == "" {
		opts.Home, _ = os.UserHomeDir()
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &Service{opts: opts, db: opts.Store.Reader(), w: opts.Writer, rec: opts.Records, log: opts.Log,
		ctx: ctx, cancel: cancel, q: newQueue(), keys: map[string]string{}, runs: map[string]*run{},
		secrets: map[string]*run{}, gitKeys: map[string]*run{}, live: map[string]LivePicture{}}
}

// Agents names the agents there are, sorted.
func (s *Service) Agents() []string {
	names := make([]string, 0, len(s.opts.Drivers))
	for n := range s.opts.Drivers {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// folderPlan is where a new run will work.
type folderPlan struct {
	kind         FolderKind
	folder, dir  string
	branch, key  string
	needsPrepare bool
}

func (s *Service) planFolder(req AssignRequest, id string) (folderPlan, error) {
	if req.RepoURL != "" {
		if err := checkCloneURL(req.RepoURL); err != nil {
			return folderPlan{}, err
		}
		dir := filepath.Join(s.opts.DataDir, "workspace", id)
		return folderPlan{kind: FolderClone, folder: req.RepoURL, dir: dir, key: dir, needsPrepare: true}, nil
	}
	if req.Folder == "" {
		if req.Worktree {
			return folderPlan{}, problem.Invalid("A worktree needs the folder of a git repository; name it.")
		}
		if p, ok := s.taskProject(req.TaskID); ok {
			dir, err := s.projectFolder(p)
			if err != nil {
				return folderPlan{}, err
			}
			return folderPlan{kind: FolderProject, folder: p.ID, dir: dir, key: dir, needsPrepare: true}, nil
		}
		dir := filepath.Join(s.opts.DataDir, "workspace", id)
		return folderPlan{kind: FolderWorkspace, dir: dir, key: dir, needsPrepare: true}, nil
	}
	if !filepath.IsAbs(req.Folder) {
		return folderPlan{}, problem.Invalid("The folder %q must be an absolute path.", req.Folder)
	}
	real, err := filepath.EvalSymlinks(filepath.Clean(req.Folder))
	if err != nil {
		return folderPlan{}, problem.Invalid("The folder %s does not exist.", req.Folder)
	}
	if fi, err := os.Stat(real); err != nil || !fi.IsDir() {
		return folderPlan{}, problem.Invalid("%s is not a folder.", req.Folder)
	}
	if !req.Worktree {
		return folderPlan{kind: FolderNamed, folder: real, dir: real, key: real}, nil
	}
	top, err := gitTop(s.ctx, real)
	if err != nil {
		return folderPlan{}, problem.Invalid("%s is not in a git repository, so it cannot have a worktree.", req.Folder)
	}
	dir := filepath.Join(s.opts.DataDir, "worktrees", id)
	return folderPlan{kind: FolderWorktree, folder: top, dir: dir, key: dir,
		branch: "ensemble/" + shortID(id), needsPrepare: true}, nil
}

// shortID is the first 8 characters of a job id after its prefix.
func shortID(id string) string {
	id = strings.TrimPrefix(id, "job_")
	if len(id) > 8 {
		id = id[:8]
	}
	return id
}

// Assign creates a run and puts it in the queue. Its error is a problem.Invalid (or a records
// error) for a request the person must correct; nothing is written then.
func (s *Service) Assign(ctx context.Context, req AssignRequest) (Job, error) {
	var earlier Job
	var choice SessionChoice
	if req.Continue == "" && s.opts.Sessions != nil && req.Agent != "" && req.RepoURL == "" && !req.Worktree {
		var err error
		choice, err = s.opts.Sessions.Choose(ctx, ChoiceInput{Agent: req.Agent, Folder: req.Folder,
			TaskID: strings.TrimSpace(req.TaskID), Title: strings.TrimSpace(req.Title), Brief: req.Brief,
			NewSession: req.NewSession})
		if err != nil {
			s.log.Warn("no session chosen", "err", err)
			choice = SessionChoice{}
		}
		req.Continue = choice.Continue
	}
	deleted := false
	if req.Continue != "" {
		var err error
		if earlier, deleted, err = s.continued(ctx, &req); err != nil {
			return Job{}, err
		}
	}
	if err := s.CheckAgent(ctx, req.Agent); err != nil {
		return Job{}, err
	}
	req.Title, req.TaskID, req.Brief = strings.TrimSpace(req.Title), strings.TrimSpace(req.TaskID), strings.TrimSpace(req.Brief)
	switch {
	case req.TaskID == "" && req.Title == "":
		return Job{}, problem.Invalid("Name the task to run (taskId) or say what to do (title).")
	case req.TaskID != "" && req.Title != "":
		return Job{}, problem.Invalid("Give either a task (taskId) or a title for a new one, not both.")
	case req.Folder != "" && req.RepoURL != "":
		return Job{}, problem.Invalid("Give either a folder or a repository URL, not both.")
	case len(req.Brief) > 100_000:
		return Job{}, problem.Invalid("The brief is longer than 100,000 characters.")
	}
	set, err := req.Settings.Resolve()
	if err != nil {
		return Job{}, err
	}
	id := ledger.NewID("job_")
	plan, err := s.planFolder(req, id)
	if err != nil {
		return Job{}, err
	}
	if req.Actor.Kind == "" {
		req.Actor = ledger.Actor{Kind: ledger.Person}
	}
	set.SecretsNamed = req.Actor.Kind == ledger.Node
	job := Job{ID: id, TaskID: req.TaskID, Agent: req.Agent, Brief: req.Brief, Status: Queued, Settings: set,
		FolderKind: plan.kind, Folder: plan.folder, WorkDir: plan.dir, Branch: plan.branch, ResourceKey: plan.key,
		Continues: earlier.ID, Resume: earlier.SessionID}
	note := choice.Text
	if deleted {
		job.Resume = ""
		note = "The agent session of run " + earlier.ID + " was deleted in Ensemble, so this run starts a new session in its folder, told what the earlier task was."
	}
	insert := func(t *ledger.Tx) error {
		now := t.Now()
		job.CreatedAt, job.UpdatedAt = now, now
		if err := insertJob(t, &job); err != nil {
			return err
		}
		if note != "" {
			if err := t.Emit(KindSession, job.ID, Trace{RunID: job.ID, TaskID: job.TaskID, Text: note}); err != nil {
				return err
			}
		}
		if choice.Save != nil {
			if err := choice.Save(t, job.ID, job.TaskID); err != nil {
				return err
			}
		}
		if req.Within != nil {
			return req.Within(t, job)
		}
		return nil
	}
	if req.TaskID != "" {
		err = s.w.Exec(ctx, func(t *ledger.Tx) error {
			row, err := t.Get("tasks", req.TaskID)
			if err != nil {
				return err
			}
			if row == nil || row["deleted_at"] != nil {
				return problem.Invalid("There is no task with id %q.", req.TaskID)
			}
			if job.Brief == "" {
				job.Brief = briefOf(row.Str("title"), row.Str("page"))
			}
			return insert(t)
		})
	} else {
		title, page := titleOf(req.Title)
		if job.Brief == "" {
			job.Brief = req.Title
		}
		_, err = s.rec.Batch(ctx, req.Actor, fmt.Sprintf("Assigned “%s” to %s", title, req.Agent), func(b *records.Batch) error {
			in := records.TaskInput{Title: records.Some(title)}
			if page != "" {
				in.Page = records.Some(page)
			}
			task, err := s.rec.Tasks().CreateIn(b, in)
			if err != nil {
				return err
			}
			job.TaskID = task.ID
			return insert(b.Tx())
		})
	}
	if err != nil {
		return Job{}, err
	}
	s.mu.Lock()
	if s.started && !s.closed {
		s.enqueueLocked(job.ID, job.ResourceKey)
	}
	s.mu.Unlock()
	return s.Get(ctx, job.ID)
}

// CheckAgent says, as a problem.Invalid, why agent cannot run now: there is no such agent, or it is
// not installed or signed in (the sentence names the command to sign in); nil when it can.
func (s *Service) CheckAgent(ctx context.Context, agent string) error {
	if err := s.KnownAgent(agent); err != nil {
		return err
	}
	if s.opts.Ready != nil {
		if err := s.opts.Ready(ctx, agent); err != nil {
			return problem.Invalid("%s", sentence(err))
		}
	}
	return nil
}

// KnownAgent says, as a problem.Invalid, that there is no agent by that name; nil for an agent
// there is, whether or not it is installed or signed in now.
func (s *Service) KnownAgent(agent string) error {
	if _, ok := s.opts.Drivers[agent]; ok {
		return nil
	}
	names := s.Agents()
	switch {
	case len(names) == 0:
		return problem.Invalid("There is no agent %q: no agents are set up in this Ensemble yet.", agent)
	case agent == "":
		return problem.Invalid("Name the agent to run: %s.", strings.Join(names, ", "))
	}
	return problem.Invalid("There is no agent %q; the agents are %s.", agent, strings.Join(names, ", "))
}

// titleOf makes a task's title from what to do: its first line, cut to 120 characters; the whole
// text goes on the task's page when the title does not hold it.
func titleOf(what string) (title, page string) {
	first, _, _ := strings.Cut(what, "\n")
	first = strings.TrimSpace(first)
	if r := []rune(first); len(r) > 120 {
		first = strings.TrimSpace(string(r[:119])) + "…"
	}
	if first != what {
		page = what
	}
	return first, page
}

// briefOf is a task's brief: its title, and its page when it has one.
func briefOf(title, page string) string {
	if strings.TrimSpace(page) == "" {
		return title
	}
	return title + "\n\n" + page
}

func insertJob(t *ledger.Tx, j *Job) error {
	ctx := t.Context()
	at := store.Stamp(j.CreatedAt)
	_, err := t.ExecContext(ctx, `INSERT INTO jobs (id, task_id, agent, brief, status, folder_kind, folder, work_dir,
		branch, resource_key, continues, resume, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		j.ID, j.TaskID, j.Agent, j.Brief, string(j.Status), string(j.FolderKind), j.Folder, j.WorkDir, j.Branch,
		j.ResourceKey, j.Continues, j.Resume, at, at)
	if err != nil {
		return fmt.Errorf("jobs: insert %s: %w", j.ID, err)
	}
	st := j.Settings
	_, err = t.ExecContext(ctx, `INSERT INTO job_settings (job_id, mode, trusted, sandbox, outside, git,
		ask_before_commit, internet, max_minutes, max_turns, model, effort, context_tier, fast, secrets, secrets_named)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		j.ID, string(st.Mode), st.Trusted, st.Sandbox, string(st.Outside), string(st.Git), st.AskBeforeCommit,
		st.Internet, st.MaxMinutes, st.MaxTurns, st.Model, st.Effort, st.ContextTier, st.Fast, namesJSON(st.Secrets), st.SecretsNamed)
	if err != nil {
		return fmt.Errorf("jobs: insert settings of %s: %w", j.ID, err)
	}
	return t.Emit(KindCreated, j.ID, Trace{RunID: j.ID, TaskID: j.TaskID, Agent: j.Agent, Status: Queued,
		Text: "Assigned to " + j.Agent + " (" + st.describe() + ")."})
}

const jobColumns = `j.id, j.task_id, j.agent, j.brief, j.status, j.folder_kind, j.folder, j.work_dir, j.branch,
	j.resource_key, j.session_id, j.continues, j.resume, j.model, j.summary, j.report, j.base_commit, j.changes, j.error, j.usage, j.turns, j.steps, j.attempts, j.kept, j.observed,
	j.created_at, j.started_at, j.ended_at, j.updated_at, s.mode, s.trusted, s.sandbox, s.outside, s.git,
	s.ask_before_commit, s.internet, s.max_minutes, s.max_turns, s.model, s.effort, s.context_tier, s.fast, s.secrets, s.secrets_named`

const jobFrom = ` FROM jobs j JOIN job_settings s ON s.job_id = j.id `

type scanner interface{ Scan(dest ...any) error }

func scanJob(r scanner) (Job, error) {
	var (
		j                  Job
		usage, kept        string
		observed           string
		report, changes    string
		created, updated   store.Time
		started, ended     store.Time
		status, kind, mode string
		outside, git       string
		secretNames        string
	)
	err := r.Scan(&j.ID, &j.TaskID, &j.Agent, &j.Brief, &status, &kind, &j.Folder, &j.WorkDir, &j.Branch,
		&j.ResourceKey, &j.SessionID, &j.Continues, &j.Resume, &j.Model, &j.Summary, &report, &j.BaseCommit, &changes, &j.Error, &usage, &j.Turns, &j.Steps, &j.Attempts, &kept, &observed,
		&created, &started, &ended, &updated, &mode, &j.Settings.Trusted, &j.Settings.Sandbox, &outside, &git,
		&j.Settings.AskBeforeCommit, &j.Settings.Internet, &j.Settings.MaxMinutes, &j.Settings.MaxTurns,
		&j.Settings.Model, &j.Settings.Effort, &j.Settings.ContextTier, &j.Settings.Fast, &secretNames, &j.Settings.SecretsNamed)
	if err != nil {
		return Job{}, err
	}
	j.Status, j.FolderKind = Status(status), FolderKind(kind)
	j.Settings.Mode, j.Settings.Outside, j.Settings.Git = judge.Mode(mode), judge.Outside(outside), judge.Git(git)
	json.Unmarshal([]byte(secretNames), &j.Settings.Secrets)
	json.Unmarshal([]byte(usage), &j.Usage)
	json.Unmarshal([]byte(kept), &j.Kept)
	json.Unmarshal([]byte(observed), &j.Observed)
	json.Unmarshal([]byte(changes), &j.Changes)
	if j.Changes == nil {
		j.Changes = []FileChange{}
	}
	if report != "" {
		j.Report = new(Report)
		json.Unmarshal([]byte(report), j.Report)
	}
	j.CreatedAt, j.UpdatedAt = created.Time, updated.Time
	j.StartedAt, j.EndedAt = started.Ptr(), ended.Ptr()
	return j, nil
}

// Get returns a run.
func (s *Service) Get(ctx context.Context, id string) (Job, error) {
	j, err := scanJob(s.db.QueryRowContext(ctx, "SELECT "+jobColumns+jobFrom+"WHERE j.id = ?", id))
	if errors.Is(err, sql.ErrNoRows) {
		return Job{}, problem.NotFound("There is no run with id %q.", id)
	}
	if err != nil {
		return Job{}, fmt.Errorf("jobs: read %s: %w", id, err)
	}
	return j, nil
}

// List returns runs, newest first: of one task when taskID is set, else the latest 200.
func (s *Service) List(ctx context.Context, taskID string) ([]Job, error) {
	q, args := "SELECT "+jobColumns+jobFrom, []any{}
	if taskID != "" {
		q, args = q+"WHERE j.task_id = ? ", append(args, taskID)
	}
	rows, err := s.db.QueryContext(ctx, q+"ORDER BY j.created_at DESC, j.id LIMIT 200", args...)
	if err != nil {
		return nil, fmt.Errorf("jobs: list: %w", err)
	}
	defer rows.Close()
	out := []Job{}
	for rows.Next() {
		j, err := scanJob(rows)
		if err != nil {
			return nil, fmt.Errorf("jobs: list: %w", err)
		}
		out = append(out, j)
	}
	return out, rows.Err()
}

// continued checks the run req continues and fills in what it takes from it: the agent and the
// folder, unless req names its own (another agent cannot open this agent's session). deleted says
// the earlier run's session was deleted in Ensemble: the new run starts a session of its own.
func (s *Service) continued(ctx context.Context, req *AssignRequest) (earlier Job, deleted bool, err error) {
	earlier, err = s.Get(ctx, req.Continue)
	if err != nil {
		return Job{}, false, problem.Invalid("There is no run %q to continue.", req.Continue)
	}
	if s.opts.Sessions != nil {
		if deleted, err = s.opts.Sessions.Deleted(ctx, earlier.ID); err != nil {
			return Job{}, false, err
		}
	}
	switch {
	case earlier.SessionID == "" && !deleted:
		return Job{}, false, problem.Invalid("The run %q has no agent session to continue; it never got that far.", earlier.ID)
	case req.Agent == "":
		req.Agent = earlier.Agent
	case req.Agent != earlier.Agent:
		return Job{}, false, problem.Invalid("The run %q was %s's session; %s cannot continue it.", earlier.ID, earlier.Agent, req.Agent)
	}
	if req.Folder == "" && !req.Worktree && req.RepoURL == "" {
		req.Folder = earlier.WorkDir
	}
	return earlier, deleted, nil
}
