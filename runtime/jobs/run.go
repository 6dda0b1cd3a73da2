package jobs

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/ensemblework/ensemble/browser"
	"github.com/ensemblework/ensemble/engines"
	"github.com/ensemblework/ensemble/runtime/judge"
	"github.com/ensemblework/ensemble/runtime/ledger"
	"github.com/ensemblework/ensemble/runtime/records"
	"github.com/ensemblework/ensemble/runtime/secrets"
	"github.com/ensemblework/ensemble/runtime/store"
)

// Why a run's context ended.
var (
	errStopRequested = errors.New("the person stopped the run")
	errStuck         = errors.New("the run went quiet for too long")
	errLimit         = errors.New("the run reached its minutes limit")
	errShutdown      = errors.New("Ensemble stopped while the run was going")
)

// run is a job the queue started. It is the agent's [engines.Host].
type run struct {
	s      *Service
	job    Job
	ctx    context.Context
	cancel context.CancelCauseFunc
	rec    *recorder
	places Places
	// before is what differed from the base commit in the work folder when the run began (see
	// [treeState]); nil when the run began before this runtime started, so all is listed.
	before map[string]string

	mu          sync.Mutex // guards the following fields
	paused      bool
	resumed     chan struct{} // closed when a pause ends
	engine      engines.Run   // the attempt going, nil between attempts
	stalled     bool          // the watch stopped the attempt going for showing no sign of life
	kept        judge.Kept
	lastSign    time.Time // the agent's last sign of life
	open        map[string]*openCall
	secretCalls map[string]bool      // tool ids of permitted reads of secrets files
	unsandboxed map[string]bool      // tool ids the person let run outside the sandbox
	enforcement *engines.Enforcement // the sandbox the agent says it set up, from its started event
	asking      int                  // questions waiting on Needs me
	active      time.Duration        // time counted against the minutes limit
	steps       int
	session     string
	usage       engines.Usage
	observed    Observed // what the agent reported it runs with
	attempt     int
	title       string           // the task's
	git         []secrets.Secret // the secrets git signs in with (runsecrets.go)
	acts        map[string]bool  // consequential clicks allowed for this run, by "<site> <word>"

	snaps   browser.RefNames           // the last snapshot of each tab, for its references' names (browseract.go)
	signIns map[string]chan signInDone // held tabs waiting for the person's sign-in, by tab (browserlogin.go)

	done chan struct{} // closed once the run's end is recorded
}

func (s *Service) newRun(id string) *run {
	ctx, cancel := context.WithCancelCause(s.ctx)
	return &run{s: s, job: Job{ID: id}, ctx: ctx, cancel: cancel, rec: newRecorder(s.w, id, s.log.Warn, s.hide),
		lastSign: time.Now(), open: map[string]*openCall{}, secretCalls: map[string]bool{}, unsandboxed: map[string]bool{},
		done: make(chan struct{})}
}

func (r *run) touch() {
	r.mu.Lock()
	r.lastSign = time.Now()
	r.mu.Unlock()
}

// halt ends the run for why: its context is cancelled and the agent is asked to stop.
func (r *run) halt(why error) {
	// Take the engine before cancelling: the cancel can end the attempt and clear r.engine before
	// Stop is asked, and Stop is what ends the agent's protocol turn properly.
	r.mu.Lock()
	eng := r.engine
	r.mu.Unlock()
	r.cancel(why)
	if eng != nil {
		go func() {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			eng.Stop(ctx)
		}()
	}
}

// waitUnpaused blocks while the run is paused.
func (r *run) waitUnpaused(ctx context.Context) error {
	for {
		r.mu.Lock()
		paused, ch := r.paused, r.resumed
		r.mu.Unlock()
		if !paused {
			return nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		case <-r.ctx.Done():
			return context.Cause(r.ctx)
		}
	}
}

// main runs the job to its end and lets the next one for its folder start.
func (r *run) main() {
	defer r.s.wg.Done()
	defer r.s.finish(r)
	j, err := r.s.Get(context.Background(), r.job.ID)
	if err != nil {
		r.s.log.Error("run cannot start", "run", r.job.ID, "err", err)
		return
	}
	if j.Status != Queued {
		return // stopped while it waited
	}
	r.job = j
	if r.ctx.Err() != nil { // stopped before it started
		r.end(ended(context.Cause(r.ctx), engines.Result{}))
		return
	}
	r.kept = j.Kept
	r.title, _, _ = strings.Cut(j.Brief, "\n")
	if t, err := r.s.rec.Tasks().Get(context.Background(), j.TaskID); err == nil {
		r.title = t.Title
	}
	r.session = j.SessionID
	r.places = NewPlaces(r.s.opts.Home, r.s.opts.DataDir, r.s.opts.MCPURL)
	if err := r.s.w.Exec(context.Background(), func(t *ledger.Tx) error {
		if err := updateJob(t, j.ID, map[string]any{"status": string(Running), "started_at": store.Stamp(t.Now())}); err != nil {
			return err
		}
		return t.Emit(KindStatus, j.ID, Trace{RunID: j.ID, Status: Running, Reason: "Started in " + j.WorkDir + "."})
	}); err != nil {
		r.s.log.Error("run cannot start", "run", j.ID, "err", err)
		return
	}
	r.moveTask(records.InProgress, "")
	status, res, why := r.work()
	r.end(status, res, why)
}

// modelChoices are the run's settings as sent to the agent: a thinking level, context window or
// fast mode its model does not take left out, with a note on the run saying so.
func (r *run) modelChoices() Settings {
	if r.s.opts.Models == nil {
		return r.job.Settings
	}
	sent, notes := fitModel(r.job.Settings, r.s.opts.Models(r.ctx, r.job.Agent))
	for _, n := range notes {
		r.rec.add(KindNote, Trace{Text: n}, nil)
	}
	return sent
}

// work prepares the folder and drives the agent, carrying its session on after failures.
func (r *run) work() (Status, engines.Result, string) {
	if err := prepareFolder(r.ctx, r.job); err != nil {
		return Failed, engines.Result{}, err.Error()
	}
	if r.job.FolderKind == FolderProject {
		if err := r.s.bringProject(r.ctx, r.job.WorkDir, r.job.Folder); err != nil {
			return Failed, engines.Result{}, "The project's brief could not be written into its folder: " + err.Error() + "."
		}
	}
	if r.job.BaseCommit == "" {
		r.job.BaseCommit = headCommit(r.ctx, r.job.WorkDir)
		r.before = treeState(r.ctx, r.job.WorkDir, r.job.BaseCommit)
		r.rec.add("", Trace{}, map[string]any{"base_commit": r.job.BaseCommit})
	}
	driver := r.s.opts.Drivers[r.job.Agent]
	if driver == nil {
		return Failed, engines.Result{}, fmt.Sprintf("The agent %q is no longer set up in this Ensemble.", r.job.Agent)
	}
	// The run's own temporary folder: writable in its sandbox, where /tmp is not, and gone after.
	tmp, err := os.MkdirTemp("", "ensemble-run-")
	if err != nil {
		return Failed, engines.Result{}, "Ensemble could not make the run's temporary folder: " + err.Error() + "."
	}
	defer os.RemoveAll(tmp)
	r.places.Writable = []string{tmp}
	go r.watch()
	mcp := r.s.mcpServer(r)
	defer r.s.dropRunSecrets(r)
	defer r.closeTabs() // its tabs end with it, held ones too
	if r.s.opts.Browser != nil {
		go r.watchLive()
	}
	commandEnv, secretsNote, err := r.secretsEnv()
	if err != nil {
		return Failed, engines.Result{}, "Ensemble could not read the secrets this run may have: " + sentence(err)
	}
	brief := r.job.Brief + secretsNote
	if mcp.URL != "" {
		brief += reportingNote
	}
	prompt, gone, failures := brief, false, 0
	switch {
	case r.session != "":
		prompt = carryOn
	case r.job.Resume != "":
		// A new task in an earlier run's session: the agent has that conversation already.
		r.session = r.job.Resume
	case r.job.Continues != "":
		// The earlier run's session was deleted in Ensemble: a new one, told what came before.
		prompt = r.continuesBrief(brief)
	}
	sent := r.modelChoices()
	for {
		r.mu.Lock()
		r.attempt++
		attempt, session := r.attempt, r.session
		r.mu.Unlock()
		r.rec.add("", Trace{}, map[string]any{"attempts": attempt})
		r.mu.Lock()
		js := JudgeSettings(r.job.Settings, r.job.FolderKind, r.job.WorkDir, r.places, cloneKept(r.kept))
		r.mu.Unlock()
		spec := engines.Spec{Folder: r.job.WorkDir, Prompt: prompt, Model: sent.Model,
			Effort: sent.Effort, MaxTurns: r.job.Settings.MaxTurns, Resume: session,
			Trusted: r.job.Settings.Trusted && r.job.FolderKind == FolderNamed,
			Env:     map[string]string{"ENSEMBLE_RUN": r.job.ID, "TMPDIR": tmp}, CommandEnv: commandEnv, MCP: mcp,
			Context: sent.ContextTier, Fast: sent.Fast, Sandbox: sandboxOf(r.job.Settings, js)}
		res, err := r.attemptOnce(driver, spec)
		if r.ctx.Err() != nil {
			return ended(context.Cause(r.ctx), res)
		}
		r.mu.Lock()
		if r.stalled && err != nil {
			// Stuck: the watch stopped the agent; its session is carried on like after a failure.
			err = errStuck
		}
		r.stalled = false
		r.mu.Unlock()
		if err == nil {
			if res.SessionID != "" {
				r.mu.Lock()
				r.session = res.SessionID
				r.mu.Unlock()
			}
			if res.Gone {
				if gone {
					return Failed, res, "The agent could not open a session for this run."
				}
				gone = true
				r.mu.Lock()
				r.session = ""
				r.mu.Unlock()
				prompt = r.continuesBrief(brief)
				r.rec.add(KindSessionGone, Trace{Session: session,
					Text: "The agent's session no longer exists; starting a new session with the full brief."},
					map[string]any{"session_id": ""})
				continue
			}
			if m := r.job.Settings.MaxTurns; m > 0 && res.Turns >= m {
				return Limit, res, fmt.Sprintf("The run used its %d turns; the work so far is kept.", m)
			}
			return Done, res, ""
		}
		switch {
		case errors.Is(err, engines.ErrStopped):
			return Stopped, res, "The agent stopped."
		case errors.Is(err, engines.ErrNotInstalled), errors.Is(err, engines.ErrSignedOut), errors.Is(err, engines.ErrNoSandbox):
			return Failed, res, sentence(err)
		}
		failures++
		retries := r.s.opts.Timing.Retries
		if failures > len(retries) {
			if errors.Is(err, errStuck) {
				return ended(errStuck, res)
			}
			return Failed, res, sentence(err)
		}
		wait := retries[failures-1]
		r.mu.Lock()
		r.closeOpenLocked("(skipped: the agent stopped before the call returned)")
		r.mu.Unlock()
		r.rec.add(KindRetry, Trace{Attempt: attempt, RetryInMs: wait.Milliseconds(), Text: trim(err.Error(), previewText)}, nil)
		select {
		case <-time.After(wait):
		case <-r.ctx.Done():
			return ended(context.Cause(r.ctx), res)
		}
		r.mu.Lock()
		switch {
		case r.session == "":
			prompt = brief
		case errors.Is(err, errStuck):
			prompt = carryOnStuck
		default:
			prompt = carryOn
		}
		r.mu.Unlock()
	}
}

// carryOn is the prompt that resumes a session after the engine failed.
const carryOn = "Your run stopped because the agent's process or its connection failed. Carry on with the task where you left off; check the files first, since the last step may not have finished."

// carryOnStuck is the prompt that resumes a session the watch stopped for going quiet.
const carryOnStuck = "Your run was stopped because the agent showed no sign of life for too long. Carry on with the task where you left off; check the files first, since the last step may not have finished."

// attemptOnce starts the agent and waits for it to end.
func (r *run) attemptOnce(d engines.Driver, spec engines.Spec) (engines.Result, error) {
	r.touch() // the quiet time of an attempt starts with it, not with the wait before it
	eng, err := d.Start(r.ctx, spec, r)
	if err != nil {
		return engines.Result{}, err
	}
	r.mu.Lock()
	r.engine = eng
	r.mu.Unlock()
	if r.ctx.Err() != nil {
		r.halt(context.Cause(r.ctx))
	}
	res, err := eng.Wait()
	r.mu.Lock()
	r.engine = nil
	r.mu.Unlock()
	return res, err
}

// ended is the status a run ends in when its context ended for why.
func ended(why error, res engines.Result) (Status, engines.Result, string) {
	switch why {
	case errStopRequested:
		return Stopped, res, "Stopped."
	case errStuck:
		return Stuck, res, "The agent showed no sign of life for too long, so the run was stopped."
	case errLimit:
		return Limit, res, "The run reached its minutes limit; the work so far is kept."
	}
	return Interrupted, res, "Ensemble stopped while the run was going."
}

// sentence is an error as the one sentence a person reads.
func sentence(err error) string {
	s := Redact(err.Error())
	if s == "" {
		return "The agent failed."
	}
	if last := s[len(s)-1]; last != '.' && last != '!' && last != '?' {
		s += "."
	}
	if r := []rune(s); r[0] >= 'a' && r[0] <= 'z' {
		s = string(r[0]-'a'+'A') + string(r[1:])
	}
	return s
}

// watch stops the agent of a run that shows no sign of life for Quiet (QuietTool while a tool
// call runs) and no question waits on the person, so that its session is carried on (spec 003
// §3.1), and ends a run that has spent its minutes. Time waiting on Needs me or paused counts for
// neither.
func (r *run) watch() {
	t := r.s.opts.Timing
	tick := time.NewTicker(t.Tick)
	defer tick.Stop()
	limit := time.Duration(r.job.Settings.MaxMinutes) * t.minute()
	last := time.Now()
	for {
		select {
		case <-r.ctx.Done():
			return
		case now := <-tick.C:
			r.mu.Lock()
			waiting := r.asking > 0 || r.paused
			if !waiting {
				r.active += now.Sub(last)
			} else {
				r.lastSign = now
			}
			last = now
			quiet := t.Quiet
			if len(r.open) > 0 {
				quiet = t.QuietTool
			}
			stuck := !waiting && now.Sub(r.lastSign) > quiet
			over := limit > 0 && r.active >= limit
			eng := r.engine
			if stuck {
				// Between attempts there is nothing to stop; an attempt's quiet starts anew.
				r.lastSign = now
				r.stalled = eng != nil
			}
			r.mu.Unlock()
			switch {
			case over:
				r.halt(errLimit)
				return
			case stuck && eng != nil:
				go func() {
					ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
					defer cancel()
					eng.Stop(ctx)
				}()
			}
		}
	}
}

// closeOpenLocked ends the tool calls still open as failed, with why as their output.
func (r *run) closeOpenLocked(why string) {
	for id, oc := range r.open {
		if oc.step > 0 {
			r.rec.add(KindToolEnd, Trace{Step: oc.step, Tool: oc.tool, ToolID: id, Failed: true,
				Output: why, DurationMs: time.Since(oc.at).Milliseconds()}, nil)
		}
		delete(r.open, id)
	}
}

// end records how the run ended: open calls are closed, the job row and its last events written,
// the summary put on the task.
func (r *run) end(status Status, res engines.Result, why string) {
	r.mu.Lock()
	r.closeOpenLocked("(the run ended before the call returned)")
	usage := r.usage
	if res.Usage != (engines.Usage{}) {
		usage = res.Usage
	}
	session := r.session
	r.mu.Unlock()
	r.rec.close()
	summary, why := r.s.hide(trim(res.Summary, previewSummary)), r.s.hide(why)
	changes := runChanges(context.Background(), r.job.WorkDir, r.job.BaseCommit, r.before)
	err := r.s.w.Exec(context.Background(), func(t *ledger.Tx) error {
		set := map[string]any{"status": string(status), "ended_at": store.Stamp(t.Now()), "summary": summary,
			"error": why, "turns": res.Turns, "usage": jsonValue{usage}, "session_id": session,
			"changes": jsonValue{changes}}
		if status == Done {
			set["error"] = ""
		}
		if err := updateJob(t, r.job.ID, set); err != nil {
			return err
		}
		if err := t.Emit(KindStatus, r.job.ID, Trace{RunID: r.job.ID, Status: status, Reason: why}); err != nil {
			return err
		}
		return t.Emit(KindEnded, r.job.ID, Trace{RunID: r.job.ID, TaskID: r.job.TaskID, Status: status, Reason: why,
			Summary: summary, Usage: &usage, Turns: res.Turns, Session: session, Changes: changes})
	})
	if err != nil {
		r.s.log.Error("run end not recorded", "run", r.job.ID, "err", err)
	}
	if wd, ok := r.s.opts.Asker.(Withdrawer); ok {
		if _, err := wd.WithdrawRun(context.Background(), r.job.ID); err != nil {
			r.s.log.Warn("run's open questions not withdrawn", "run", r.job.ID, "err", err)
		}
	}
	if status == Done {
		r.moveTask(records.WaitingApproval, summary)
	} else if summary != "" {
		r.moveTask("", summary)
	}
}

// moveTask moves the run's task (when the state machine allows it) and adds the agent's report to
// its page, as the run.
func (r *run) moveTask(to records.Status, summary string) {
	ctx := context.Background()
	tasks := r.s.rec.Tasks()
	t, err := tasks.Get(ctx, r.job.TaskID)
	if err != nil || t.DeletedAt != nil {
		return
	}
	in := records.TaskInput{}
	if to != "" && records.CheckMove(t.Status, to) == nil && t.Status != to &&
		!(to == records.WaitingApproval && t.Status != records.InProgress) {
		in.Status = records.Some(to)
	}
	if summary != "" {
		page := t.Page
		if page != "" {
			page += "\n\n"
		}
		in.Page = records.Some(page + "## Report from " + r.job.Agent + " (run " + r.job.ID + ")\n\n" + summary)
	}
	if !in.Status.Set && !in.Page.Set {
		return
	}
	actor := ledger.Actor{Kind: ledger.AgentRun, ID: r.job.ID, Name: r.job.Agent}
	if _, err := tasks.Update(ctx, actor, t.ID, in); err != nil {
		r.s.log.Warn("run could not update its task", "run", r.job.ID, "task", t.ID, "err", err)
	}
}

func (t Timing) minute() time.Duration {
	if t.Minute > 0 {
		return t.Minute
	}
	return time.Minute
}

// continuesBrief is the brief for a new session that stands in for one the agent no longer has:
// what the earlier run was and how it ended, then the task.
func (r *run) continuesBrief(brief string) string {
	if r.job.Continues == "" {
		return brief
	}
	earlier, err := r.s.Get(context.Background(), r.job.Continues)
	if err != nil {
		return brief
	}
	title := earlier.Brief
	if t, err := r.s.rec.Tasks().Get(context.Background(), earlier.TaskID); err == nil {
		title = t.Title
	}
	return fmt.Sprintf("This continues an earlier task, “%s” (it ended %s). What was reported then:\n\n%s\n\n---\n\n%s",
		title, earlier.Status, earlier.Summary, brief)
}
