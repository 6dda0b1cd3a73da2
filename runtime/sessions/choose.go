package sessions

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/ensemblework/ensemble/runtime/jobs"
	"github.com/ensemblework/ensemble/runtime/ledger"
	"github.com/ensemblework/ensemble/runtime/records"
	"github.com/ensemblework/ensemble/runtime/store"
)

// newTask is the task a run is for, as choice reads it.
type newTask struct {
	id, title, labels, page string
	project                 string // "" for none
}

// Choose decides whether a new run continues one of the agent's sessions (jobs.Sessions).
func (s *Service) Choose(ctx context.Context, in jobs.ChoiceInput) (jobs.SessionChoice, error) {
	start := time.Now()
	now := s.opts.Now()
	cfg := s.cfg.get(now)
	rec := choiceRecord{Agent: in.Agent, cfg: cfg}
	switch {
	case in.NewSession:
		rec.Band, rec.Note, rec.Reason = NoBand, "new-session", "A new session, as asked."
		return rec.choice(start), nil
	case !cfg.Enabled:
		rec.Band, rec.Note, rec.Reason = NoBand, "disabled", "A new session: choosing one is turned off."
		return rec.choice(start), nil
	}
	task, err := s.newTask(ctx, in)
	if err != nil {
		return jobs.SessionChoice{}, err
	}
	rec.Project = task.project
	w, err := s.load(ctx)
	if err != nil {
		return jobs.SessionChoice{}, err
	}
	folder := ""
	if in.Folder != "" {
		if real, err := filepath.EvalSymlinks(filepath.Clean(in.Folder)); err == nil {
			folder = real
		} else {
			folder = filepath.Clean(in.Folder)
		}
	}
	chains := w.candidates(cfg, in.Agent, folder, task, now)
	corp, err := s.corpus.get(ctx, s.db, cfg, now)
	if err != nil {
		return jobs.SessionChoice{}, err
	}
	feats := func(c *chain) *features { return s.features(ctx, w, c, cfg) }
	cands := w.signals(cfg, corp, task, in.Brief, chains, feats, now, start)
	d := Decide(cfg, cands)
	rec.decision(d)
	c := rec.choice(start)
	if d.Continue {
		c.Continue = d.Best.LastRun
	}
	return c, nil
}

func (s *Service) newTask(ctx context.Context, in jobs.ChoiceInput) (newTask, error) {
	if in.TaskID == "" {
		return newTask{title: in.Title, page: in.Brief}, nil
	}
	heads, err := records.TaskHeads(ctx, s.db, []string{in.TaskID}, 0)
	if err != nil || len(heads) == 0 {
		// Assign says there is no such task; choice has nothing to add.
		return newTask{title: in.Title, page: in.Brief}, nil
	}
	h := heads[0]
	t := newTask{id: h.ID, title: h.Title, labels: h.LabelsJSON, page: h.Page}
	if h.ProjectID != nil {
		t.project = *h.ProjectID
	}
	return t, nil
}

// candidates are the agent's sessions that could take the task: idle, resumable, active within
// limits.maxAgeDays, in the folder named (when one is), whose every task is in the task's project
// (or all in none), newest first, at most limits.candidates.
func (w *world) candidates(cfg Config, agent, folder string, task newTask, now time.Time) []*chain {
	oldest := now.Add(-time.Duration(cfg.Limits.MaxAgeDays) * 24 * time.Hour)
	var out []*chain
	for i := len(w.chains) - 1; i >= 0; i-- {
		c := w.chains[i]
		ss := w.describe(c)
		if ss.Agent != agent || !ss.Resumable || ss.Status != Idle || ss.LastActive.Before(oldest) ||
			(folder != "" && ss.Folder != folder) || ss.Folder == "" {
			continue
		}
		if _, err := os.Stat(ss.Folder); err != nil {
			continue // its folder is gone: the session could not take the run
		}
		same := true
		for _, r := range c.runs {
			t := w.tasks[r.task]
			p := ""
			if t != nil && t.project != nil {
				p = *t.project
			}
			if t == nil || t.deleted != nil || p != task.project {
				same = false
				break
			}
		}
		if same {
			out = append(out, c)
		}
	}
	slices.SortStableFunc(out, func(a, b *chain) int { return w.describe(b).LastActive.Compare(w.describe(a).LastActive) })
	if len(out) > cfg.Limits.Candidates {
		out = out[:cfg.Limits.Candidates]
	}
	return out
}

// signals measures each candidate against the task. Word matching stops at limits.timeBudgetMs;
// after that links and structure decide alone.
func (w *world) signals(cfg Config, corp *corpus, task newTask, brief string, chains []*chain,
	feats func(*chain) *features, now, start time.Time) []Candidate {
	extra, ubiq := setOf(cfg.Text.ExtraStopwords), setOf(cfg.Text.Ubiquitous)
	budget := time.Duration(cfg.Limits.TimeBudgetMs) * time.Millisecond
	text := task.title + "\n" + task.page + "\n" + brief
	lower := strings.ToLower(text)
	taskCounts := map[string]float64{}
	addTerms(taskCounts, task.title, 3, extra)
	addTerms(taskCounts, task.labels, 2, extra)
	addTerms(taskCounts, task.page, 1, extra)
	if brief != task.page {
		addTerms(taskCounts, brief, 1, extra)
	}
	taskVec := corp.vector(taskCounts)
	taskAnchors := map[string]bool{}
	anchorsOf(text, ubiq, taskAnchors)
	followUp, newWork := false, false
	title := strings.ToLower(task.title)
	for _, p := range cfg.Text.FollowUp {
		followUp = followUp || containsPhrase(title, p)
	}
	for _, l := range stringList(task.labels) {
		followUp = followUp || slices.Contains(cfg.Text.FollowUpLabels, strings.ToLower(l))
	}
	for _, p := range cfg.Text.NewWork {
		newWork = newWork || containsPhrase(title, p)
	}
	out := make([]Candidate, 0, len(chains))
	anchorSets := make([][]string, 0, len(chains))
	for _, c := range chains {
		ss := w.describe(c)
		sig := Signals{FollowUp: followUp, NewWork: newWork, Tasks: ss.TaskCount,
			Warm: now.Sub(ss.LastActive) <= time.Duration(cfg.Limits.WarmMinutes)*time.Minute}
		seen := map[string]bool{}
		for _, r := range c.runs {
			if seen[r.task] || r.task == "" {
				continue
			}
			seen[r.task] = true
			if strings.Contains(lower, "ensemble://task/"+strings.ToLower(r.task)) || strings.Contains(lower, "/tasks/"+strings.ToLower(r.task)) {
				sig.Link, sig.LinkedTitle = true, w.taskRef(r.task).Title
			}
		}
		if time.Since(start) < budget {
			f := feats(c)
			sig.Topic = round2(corp.topic(taskVec, f.vector(corp), cfg))
			for _, a := range sharedAnchors(taskAnchors, f.anchors) {
				if !corp.commonAnchor(a, cfg) {
					sig.Anchors = append(sig.Anchors, a)
				}
			}
		}
		out = append(out, Candidate{Session: c.id, LastRun: ss.LastRun, LastActive: ss.LastActive, Signals: sig})
		anchorSets = append(anchorSets, sig.Anchors)
	}
	dropped := commonAcross(anchorSets)
	for i := range out {
		out[i].Signals.Anchors = slices.DeleteFunc(out[i].Signals.Anchors, func(a string) bool { return dropped[a] })
	}
	return out
}

// commonAcross are the anchors shared with more than half of the candidates: they tell none of
// them apart. With fewer than three candidates nothing is dropped.
func commonAcross(sets [][]string) map[string]bool {
	out := map[string]bool{}
	if len(sets) < 3 {
		return out
	}
	n := map[string]int{}
	for _, s := range sets {
		for _, a := range s {
			n[a]++
		}
	}
	for a, k := range n {
		if 2*k > len(sets) {
			out[a] = true
		}
	}
	return out
}

// features are a session's words and anchors: its tasks' titles (3×), labels (2×) and pages, and
// its runs' briefs and reports; its anchors include the files its runs changed.
type features struct {
	counts  map[string]float64
	anchors map[string]bool

	mu   sync.Mutex // guards the following fields
	corp *corpus    // the rarity table vec was weighed with
	vec  map[string]float64
}

// vector is the features' TF-IDF vector under corp, kept until the table is built again.
func (f *features) vector(corp *corpus) map[string]float64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.corp != corp {
		f.corp, f.vec = corp, corp.vector(f.counts)
	}
	return f.vec
}

// featureCache keeps sessions' features by what they were made from (the runs, their statuses and
// their tasks' last changes), so a decision reads and matches only what changed since the last.
type featureCache struct {
	mu sync.Mutex // guards m
	m  map[string]*features
}

func (s *Service) features(ctx context.Context, w *world, c *chain, cfg Config) *features {
	var key strings.Builder
	key.WriteString(cfg.Hash())
	for _, r := range c.runs {
		key.WriteString("|" + r.id + "/" + r.status)
		if t := w.tasks[r.task]; t != nil {
			key.WriteString("/" + t.updated.String())
		}
	}
	k := key.String()
	s.feats.mu.Lock()
	f := s.feats.m[k]
	s.feats.mu.Unlock()
	if f != nil {
		return f
	}
	extra, ubiq := setOf(cfg.Text.ExtraStopwords), setOf(cfg.Text.Ubiquitous)
	f = &features{counts: map[string]float64{}, anchors: map[string]bool{}}
	seen := map[string]bool{}
	for _, r := range c.runs {
		if t := w.tasks[r.task]; t != nil && !seen[r.task] {
			seen[r.task] = true
			addTerms(f.counts, t.title, 3, extra)
			addTerms(f.counts, t.labels, 2, extra)
			addTerms(f.counts, t.page, 1, extra)
			anchorsOf(t.title+"\n"+t.page, ubiq, f.anchors)
		}
		addTerms(f.counts, r.summary, 1, extra)
		anchorsOf(r.summary, ubiq, f.anchors)
		var changes []jobs.FileChange
		json.Unmarshal([]byte(r.changes), &changes)
		for _, ch := range changes {
			if !ubiq[strings.ToLower(filepath.Base(ch.Path))] {
				f.anchors[anchorFile+ch.Path] = true
			}
		}
	}
	for _, b := range s.briefs(ctx, c) {
		addTerms(f.counts, b, 1, extra)
		anchorsOf(b, ubiq, f.anchors)
	}
	s.feats.mu.Lock()
	if s.feats.m == nil || len(s.feats.m) > 2000 {
		s.feats.m = map[string]*features{}
	}
	s.feats.m[k] = f
	s.feats.mu.Unlock()
	return f
}

// briefs are the first part of each run's brief.
func (s *Service) briefs(ctx context.Context, c *chain) []string {
	ids := make([]string, len(c.runs))
	for i, r := range c.runs {
		ids[i] = r.id
	}
	out, _ := jobs.Briefs(ctx, s.db, ids, 4000)
	return out
}

func stringList(s string) []string {
	var out []string
	json.Unmarshal([]byte(s), &out)
	return out
}

// choiceRecord is a decision as stored in session_choices.
type choiceRecord struct {
	Agent, Project string
	Band           Band
	Decision       string
	Session        string
	Continued      string
	Score          float64
	Reason, Note   string
	Candidates     []Scored
	cfg            Config
}

func (r *choiceRecord) decision(d Decision) {
	r.Band, r.Reason, r.Note, r.Candidates = d.Band, d.Reason, d.Note, d.Ranked
	if d.Best != nil {
		r.Session, r.Score = d.Best.Session, d.Best.Score
	}
	if d.Continue {
		r.Decision, r.Continued = "continue", d.Best.LastRun
	}
}

// choice is the decision for jobs.Assign; Save records it with the run.
func (r choiceRecord) choice(start time.Time) jobs.SessionChoice {
	if r.Decision == "" {
		r.Decision = "new"
	}
	if r.Candidates == nil {
		r.Candidates = []Scored{}
	}
	took := time.Since(start).Microseconds()
	c := jobs.SessionChoice{Save: func(t *ledger.Tx, runID, taskID string) error {
		_, err := t.ExecContext(t.Context(), `INSERT INTO session_choices (id, run_id, task_id, agent, project_id,
			decision, band, session_id, continued_run, score, reason, note, config_version, config_hash, candidates,
			took_us, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			ledger.NewID("sch_"), runID, taskID, r.Agent, r.Project, r.Decision, string(r.Band), r.Session, r.Continued,
			r.Score, r.Reason, r.Note, r.cfg.Version, r.cfg.Hash(), jsonText(r.Candidates), took,
			store.Stamp(t.Now()))
		if err != nil {
			return fmt.Errorf("sessions: record the choice for %s: %w", runID, err)
		}
		return nil
	}}
	if r.Decision == "continue" {
		c.Text = r.Reason
	}
	return c
}

// ChoiceRow is a recorded decision, for calibration and tests.
type ChoiceRow struct {
	RunID, TaskID, Decision, Band, Session, ContinuedRun, Reason, Note, ConfigVersion, ConfigHash string
	Score                                                                                         float64
	Candidates                                                                                    []Scored
}

// Choices returns the decisions recorded for a run.
func (s *Service) Choices(ctx context.Context, runID string) ([]ChoiceRow, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT run_id, task_id, decision, band, session_id, continued_run, reason, note,
		config_version, config_hash, score, candidates FROM session_choices WHERE run_id = ? ORDER BY created_at`, runID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []ChoiceRow
	for rows.Next() {
		var c ChoiceRow
		var cands string
		if err := rows.Scan(&c.RunID, &c.TaskID, &c.Decision, &c.Band, &c.Session, &c.ContinuedRun, &c.Reason, &c.Note,
			&c.ConfigVersion, &c.ConfigHash, &c.Score, &cands); err != nil {
			return nil, err
		}
		json.Unmarshal([]byte(cands), &c.Candidates)
		out = append(out, c)
	}
	return out, rows.Err()
}
