package node

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/ensemblework/ensemble/runtime/jobs"
	"github.com/ensemblework/ensemble/runtime/ledger"
	"github.com/ensemblework/ensemble/runtime/needs"
	"github.com/ensemblework/ensemble/runtime/store"
)

// ReasonRun is the turn that hears a run the node started has ended; ReasonAttention the turn
// the watchdog gives it about a run (spec 002 §8.4, §8.11).
const (
	ReasonRun       = "run"
	ReasonAttention = "attention"
)

// KindRun is a run's card in the chat (spec 002 §8.8).
const KindRun = "run"

// RunCard is a run card's data.
type RunCard struct {
	JobID    string      `json:"jobId"`
	TaskID   string      `json:"taskId,omitempty"` // the run's task: its trace opens under it
	Title    string      `json:"title"`
	Status   string      `json:"status"`
	Settings RunSettings `json:"settings"`
	Session  SessionInfo `json:"session"`
	Quiet    bool        `json:"quiet,omitempty"`
}

// SessionInfo is a session as its cards and the routes show it.
type SessionInfo struct {
	ID        string      `json:"id"`
	NodeID    string      `json:"nodeId"`
	Status    string      `json:"status"` // working, waiting, queued, idle
	Agent     string      `json:"agent"`
	Model     string      `json:"model,omitempty"`
	Folder    string      `json:"folder"`
	Running   *RunningMsg `json:"running"`
	Queue     []QueuedMsg `json:"queue"`
	UpdatedAt time.Time   `json:"updatedAt"`
}

// RunningMsg is the session's message being worked on.
type RunningMsg struct {
	JobID  string `json:"jobId"`
	Title  string `json:"title"`
	Prompt string `json:"prompt"`
	Status string `json:"status"`
}

// QueuedMsg is a message waiting in the session's queue. It has no job yet: ID names it in
// POST …/queue and DELETE …/queue/{id}.
type QueuedMsg struct {
	ID       string `json:"id"`
	Title    string `json:"title"`
	Prompt   string `json:"prompt"`
	Position int    `json:"position"`
}

// postRunCardTx posts the card of a run whose job was just made, in the thread it was asked from.
func (s *Service) postRunCardTx(tx *ledger.Tx, r nodeRun, j jobs.Job) (Message, error) {
	card := RunCard{JobID: j.ID, TaskID: j.TaskID, Title: r.Title, Status: string(j.Status), Settings: r.Settings,
		Session: SessionInfo{ID: r.Root, NodeID: r.NodeID, Status: "queued", Agent: j.Agent, Model: j.Settings.Model, Folder: j.WorkDir,
			Running: &RunningMsg{JobID: j.ID, Title: r.Title, Prompt: r.Prompt, Status: string(j.Status)}, Queue: []QueuedMsg{}, UpdatedAt: tx.Now()}}
	data, _ := json.Marshal(card)
	body := fmt.Sprintf("Started “%s” with %s in %s.", r.Title, agentName(j.Agent), j.WorkDir)
	return s.insertMessageTx(tx, Message{RoomID: roomOfLane(r.Lane, r.RoomID), Author: AuthorNode, NodeID: r.NodeID, Kind: KindRun,
		Body: body, Data: data, Private: r.Private, TurnID: r.TurnID})
}

func agentName(a string) string {
	if a == "" {
		return "the agent"
	}
	return strings.ToUpper(a[:1]) + a[1:]
}

// Session is a session as the routes show it.
func (s *Service) sessionInfo(ctx context.Context, db querier, root string) (SessionInfo, error) {
	info := SessionInfo{ID: root, Status: "idle", Queue: []QueuedMsg{}}
	owner, err := sessionOwner(ctx, db, root)
	if err != nil {
		return info, err
	}
	info.NodeID = owner
	runs, err := s.queryRuns(ctx, db, "WHERE session_root = ? ORDER BY created_at, rowid", root)
	if err != nil {
		return info, err
	}
	var newest jobs.Job
	for _, r := range runs {
		switch r.State {
		case runQueued:
			info.Queue = append(info.Queue, QueuedMsg{ID: r.ID, Title: r.Title, Prompt: r.Prompt, Position: r.Position})
		case runStarted:
			j, err := s.cfg.Jobs.Get(ctx, r.JobID)
			if err != nil {
				continue
			}
			newest = j
			if !j.Status.Ended() {
				info.Running = &RunningMsg{JobID: j.ID, Title: r.Title, Prompt: r.Prompt, Status: string(j.Status)}
			}
		}
		if r.CreatedAt.After(info.UpdatedAt) {
			info.UpdatedAt = r.CreatedAt
		}
	}
	if newest.ID == "" && s.cfg.Jobs != nil {
		newest, _ = s.cfg.Jobs.Get(ctx, root)
	}
	sortQueue(info.Queue)
	info.Agent, info.Folder = newest.Agent, newest.WorkDir
	info.Model = newest.Observed.Model
	if info.Model == "" {
		info.Model = newest.Settings.Model
	}
	if newest.UpdatedAt.After(info.UpdatedAt) {
		info.UpdatedAt = newest.UpdatedAt
	}
	switch {
	case info.Running != nil && info.Running.Status == string(jobs.Running):
		info.Status = "working"
	case info.Running != nil && info.Running.Status == string(jobs.Paused):
		info.Status = "waiting"
	case info.Running != nil || len(info.Queue) > 0:
		info.Status = "queued"
	}
	return info, nil
}

func sortQueue(q []QueuedMsg) {
	for i := 1; i < len(q); i++ {
		for k := i; k > 0 && q[k].Position < q[k-1].Position; k-- {
			q[k], q[k-1] = q[k-1], q[k]
		}
	}
}

// refreshSession patches every card of a session with its state now (spec 002 §8.8), in one
// statement per card (data || patch), so no other writer's fields are lost.
func (s *Service) refreshSession(ctx context.Context, root string) {
	if s.cfg.Jobs == nil {
		return
	}
	db := s.cfg.Store.Reader()
	info, err := s.sessionInfo(ctx, db, root)
	if err != nil {
		return
	}
	runs, err := s.queryRuns(ctx, db, "WHERE session_root = ? AND card_message_id IS NOT NULL", root)
	if err != nil {
		return
	}
	err = s.cfg.Writer.Exec(ctx, func(tx *ledger.Tx) error {
		for _, r := range runs {
			j, err := s.cfg.Jobs.Get(ctx, r.JobID)
			if err != nil {
				continue
			}
			r.Settings.Resolved, r.Settings.Observed = resolvedOf(j), observedOf(j)
			settings, _ := json.Marshal(r.Settings)
			if _, err := tx.ExecContext(tx.Context(), "UPDATE node_runs SET settings = ? WHERE id = ?", string(settings), r.ID); err != nil {
				return err
			}
			patch, _ := json.Marshal(map[string]any{"status": j.Status, "settings": r.Settings, "session": info, "quiet": r.Quiet})
			row := tx.QueryRowContext(tx.Context(), "UPDATE node_messages SET data = json_patch(data, ?), updated_at = ? WHERE id = ? RETURNING "+msgCols,
				string(patch), store.Stamp(tx.Now()), r.CardID)
			m, err := scanMessage(row)
			if err != nil {
				continue
			}
			if err := tx.Emit(KindMessageUpdated, m.RoomID, m); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		s.log.Warn("node: refresh a session's cards", "session", root, "err", err)
	}
}

// startRunWatch follows the runs' status on the bus until the service closes: each change
// refreshes the run's cards, and a run's end wakes its node once and starts what is queued next.
// Runs that ended while nothing listened (Ensemble was down, the bus dropped an event) are caught
// up at the start and at every watchdog check (ENSEMBLE_NODE_WATCHDOG_MS, a minute).
func (s *Service) startRunWatch(ctx context.Context) {
	if s.cfg.Jobs == nil || s.cfg.Bus == nil {
		return
	}
	sub := s.cfg.Bus.Subscribe(1024)
	s.catchUpRuns(ctx)
	s.catchUpQuestions(ctx)
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		defer sub.Close()
		tick := time.NewTicker(time.Duration(envInt("ENSEMBLE_NODE_WATCHDOG_MS", int(time.Minute/time.Millisecond))) * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-s.life.Done():
				return
			case <-sub.Done():
				return
			case <-tick.C:
				s.catchUpRuns(s.life)
				s.catchUpQuestions(s.life)
				s.checkWatchdog(s.life)
			case ev := <-sub.C:
				switch ev.Kind {
				case jobs.KindStatus:
					s.runChanged(s.life, ev.Subject)
				case needs.KindCreated:
					var d needs.Decision
					if json.Unmarshal(ev.Data, &d) == nil {
						s.questionAsked(s.life, d)
					}
				}
			}
		}
	}()
}

// catchUpRuns handles the ends no one heard and starts queued messages of idle sessions.
func (s *Service) catchUpRuns(ctx context.Context) {
	db := s.cfg.Store.Reader()
	open, err := s.queryRuns(ctx, db, "WHERE state = 'started' AND ended_notified IS NULL ORDER BY created_at")
	if err != nil {
		s.log.Warn("node: catch up on runs", "err", err)
		return
	}
	for _, r := range open {
		if j, err := s.cfg.Jobs.Get(ctx, r.JobID); err == nil && j.Status.Ended() {
			s.runChanged(ctx, r.JobID)
		}
	}
	rows, err := db.QueryContext(ctx, "SELECT DISTINCT session_root FROM node_runs WHERE state = 'queued'")
	if err != nil {
		return
	}
	var roots []string
	for rows.Next() {
		var root string
		rows.Scan(&root)
		roots = append(roots, root)
	}
	rows.Close()
	for _, root := range roots {
		s.dispatch(ctx, root)
		s.refreshSession(ctx, root)
	}
}

// runChanged follows one run's status change.
func (s *Service) runChanged(ctx context.Context, jobID string) {
	rs, err := s.queryRuns(ctx, s.cfg.Store.Reader(), "WHERE job_id = ?", jobID)
	if err != nil || len(rs) == 0 {
		return
	}
	r := rs[0]
	j, err := s.cfg.Jobs.Get(ctx, jobID)
	if err != nil {
		return
	}
	if !j.Status.Ended() && j.FolderKind == jobs.FolderNamed {
		// A folder of Ensemble's own (workspace, clone, worktree) sits beside other runs'.
		s.outside.start(j.ID, j.WorkDir)
	} else if j.Status.Ended() {
		s.outside.end(j.ID, s.now())
	}
	if j.Status.Ended() {
		if err := s.runEnded(ctx, r, j); err != nil {
			s.log.Warn("node: hear a run's end", "job", jobID, "err", err)
		}
		s.dispatch(ctx, r.Root)
	}
	s.refreshSession(ctx, r.Root)
}

// runEnded wakes the run's node once (operation run:<job>:end) with how it ended and what is
// still queued; a quiet run (taken over by a newer call) wakes nobody.
func (s *Service) runEnded(ctx context.Context, r nodeRun, j jobs.Job) error {
	op := "run:" + j.ID + ":end"
	woke := false
	err := s.cfg.Writer.Exec(ctx, func(tx *ledger.Tx) error {
		res, err := tx.ExecContext(tx.Context(), "UPDATE node_runs SET ended_notified = ? WHERE id = ? AND ended_notified IS NULL", op, r.ID)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return ledger.ErrNoChange // heard already
		}
		var quiet int
		tx.QueryRowContext(tx.Context(), "SELECT quiet FROM node_runs WHERE id = ?", r.ID).Scan(&quiet)
		if quiet == 1 {
			return nil
		}
		queued, err := s.queryRuns(tx.Context(), tx, "WHERE session_root = ? AND state = 'queued' ORDER BY position, created_at", r.Root)
		if err != nil {
			return err
		}
		woke = true
		return s.enqueueTx(tx, Turn{NodeID: r.NodeID, RoomID: roomOfLane(r.Lane, r.RoomID), Lane: r.Lane, Private: r.Private,
			Reason: ReasonRun, ByOwner: r.ByOwner, OperationID: op, Note: endNote(r, j, queued)})
	})
	if woke && err == nil { // ErrNoChange above: heard already, Exec commits nothing and says nil
		s.wake()
	}
	return err
}

// endNote is what the node hears of a run's end.
func endNote(r nodeRun, j jobs.Job, queued []nodeRun) string {
	var b strings.Builder
	fmt.Fprintf(&b, "The run “%s” (job %s, session %s) of %s in %s has ended: %s.", r.Title, j.ID, r.Root, agentName(j.Agent), j.WorkDir, j.Status)
	if j.Error != "" {
		fmt.Fprintf(&b, " Error: %s.", j.Error)
	}
	if j.Summary != "" {
		fmt.Fprintf(&b, "\nIts summary: %s", j.Summary)
	}
	if rep := j.Report; rep != nil {
		if rb, err := json.Marshal(rep); err == nil {
			fmt.Fprintf(&b, "\nIts report: %s", rb)
		}
	}
	if len(j.Changes) > 0 {
		var files []string
		for _, c := range j.Changes {
			files = append(files, c.Path)
		}
		fmt.Fprintf(&b, "\nFiles changed: %s", strings.Join(files, ", "))
	}
	if len(queued) == 0 {
		b.WriteString("\nNothing else is queued in the session.")
	} else {
		var titles []string
		for _, q := range queued {
			titles = append(titles, "“"+q.Title+"”")
		}
		fmt.Fprintf(&b, "\nStill queued in the session, next first: %s.", strings.Join(titles, ", "))
	}
	b.WriteString("\nTell whoever asked what came of it, in one message.")
	return b.String()
}
