package node

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/ensemblework/ensemble/runtime/jobs"
	"github.com/ensemblework/ensemble/runtime/ledger"
	"github.com/ensemblework/ensemble/runtime/store"
)

// The watchdog's rules (spec 002 §8.11), with their settings' defaults.
const (
	RuleStalled   = "stalled"
	RuleRepeats   = "same_error"
	RuleTokens    = "tokens_without_changes"
	RuleOutside   = "outside_folder"
	WatchStall    = 15 * time.Minute
	WatchRepeats  = 5
	WatchStreak   = 4
	WatchTokens   = 2_000_000
	outsideWindow = 30 * time.Minute
)

// RunFacts are what the watchdog reads of a run.
type RunFacts struct {
	Working      bool      // the run is going
	Ended        time.Time // when it ended; zero while going
	LastActivity time.Time // its last event, output or step (not the heartbeat)
	Failures     []string  // its failures, oldest first: a failing command's or tool call's error
	Tokens       int64     // tokens spent
	FileChanges  int       // file-changing tool calls or changed files
	Folder       string
	Changed      []string // paths it changed, absolute or relative to Folder
}

// WatchLimits are the watchdog's settings.
type WatchLimits struct {
	Stall           time.Duration
	Repeats, Streak int
	Tokens          int64
}

// DefaultWatchLimits are the settings from the environment, else the defaults.
func DefaultWatchLimits() WatchLimits {
	return WatchLimits{Stall: time.Duration(envInt("ENSEMBLE_NODE_WATCHDOG_STALL_MS", int(WatchStall/time.Millisecond))) * time.Millisecond,
		Repeats: envInt("ENSEMBLE_NODE_WATCHDOG_REPEATS", WatchRepeats), Streak: envInt("ENSEMBLE_NODE_WATCHDOG_STREAK", WatchStreak),
		Tokens: int64(envInt("ENSEMBLE_NODE_WATCHDOG_TOKENS", WatchTokens))}
}

// Finding is one rule a run broke, with a sentence for its node.
type Finding struct {
	Rule string
	Text string
}

// Watch applies the watchdog's rules to a run's facts at now. It is pure: the same facts give
// the same findings.
func Watch(f RunFacts, lim WatchLimits, now time.Time) []Finding {
	var out []Finding
	if f.Working && !f.LastActivity.IsZero() && now.Sub(f.LastActivity) >= lim.Stall {
		out = append(out, Finding{RuleStalled, fmt.Sprintf("The run has shown no progress for %s.", now.Sub(f.LastActivity).Round(time.Minute))})
	}
	if f.Working {
		if msg, ok := repeated(f.Failures, lim.Repeats, lim.Streak); ok {
			out = append(out, Finding{RuleRepeats, fmt.Sprintf("The same failure keeps happening: %s", msg)})
		}
		if f.Tokens >= lim.Tokens && f.FileChanges == 0 {
			out = append(out, Finding{RuleTokens, fmt.Sprintf("The run spent %d tokens without changing a file.", f.Tokens)})
		}
	}
	if f.Working || (!f.Ended.IsZero() && now.Sub(f.Ended) <= outsideWindow) {
		if out2 := outside(f.Folder, f.Changed); len(out2) > 0 {
			out = append(out, Finding{RuleOutside, "The run changed files outside its folder: " + strings.Join(out2, ", ")})
		}
	}
	return out
}

// repeated finds a failure that happened at least repeats times and is the latest streak in a
// row; looking around (explorationMiss) is not failing.
func repeated(failures []string, repeats, streak int) (string, bool) {
	var real []string
	for _, f := range failures {
		if !explorationMiss(f) {
			real = append(real, failureKey(f))
		}
	}
	if len(real) == 0 {
		return "", false
	}
	last := real[len(real)-1]
	count, run := 0, 0
	for _, f := range real {
		if f == last {
			count++
		}
	}
	for i := len(real) - 1; i >= 0 && real[i] == last; i-- {
		run++
	}
	return last, count >= repeats && run >= streak
}

var missRe = regexp.MustCompile(`(?i)(path does not exist|view_range out of bounds|no such file or directory|no matches found|not found|^(grep|find|rg)\b.*exit (status|code) 1)`)

// explorationMiss says a failure is only looking around: a read, list or search that found nothing.
func explorationMiss(f string) bool { return missRe.MatchString(f) }

// failureKey is a failure's first real line, its message when it is JSON.
func failureKey(f string) string {
	var j struct {
		Error   any    `json:"error"`
		Message string `json:"message"`
	}
	if json.Unmarshal([]byte(f), &j) == nil {
		if j.Message != "" {
			return j.Message
		}
		if j.Error != nil {
			return fmt.Sprint(j.Error)
		}
	}
	for _, line := range strings.Split(f, "\n") {
		if line = strings.TrimSpace(line); line != "" {
			return line
		}
	}
	return f
}

func outside(folder string, changed []string) []string {
	if folder == "" {
		return nil
	}
	var out []string
	for _, p := range changed {
		if !filepath.IsAbs(p) {
			p = filepath.Join(folder, p)
		}
		rel, err := filepath.Rel(folder, filepath.Clean(p))
		if err != nil || rel == ".." || strings.HasPrefix(rel, "../") {
			out = append(out, p)
		}
	}
	return out
}

// checkWatchdog applies the rules to the live node runs: each new finding gives the run's node
// one attention turn, taken once by compare-and-set on node_runs.watchdog.
func (s *Service) checkWatchdog(ctx context.Context) {
	if s.cfg.Jobs == nil {
		return
	}
	runs, err := s.queryRuns(ctx, s.cfg.Store.Reader(), "WHERE state = 'started' AND created_at > ?", store.Stamp(s.now().Add(-24*time.Hour)))
	if err != nil {
		return
	}
	s.outside.forget(s.now().Add(-outsideWindow))
	lim := DefaultWatchLimits()
	for _, r := range runs {
		j, err := s.cfg.Jobs.Get(ctx, r.JobID)
		if err != nil {
			continue
		}
		if n, err := s.Node(ctx, r.NodeID); err != nil || n.Paused() {
			continue // a paused node hears nothing; the finding stays open
		}
		for _, f := range Watch(s.factsOf(ctx, j), lim, s.now()) {
			if r.Watchdog[f.Rule] != "" {
				continue
			}
			s.raise(ctx, r, j, f)
		}
	}
}

// factsOf reads a run's facts from its job and its events.
func (s *Service) factsOf(ctx context.Context, j jobs.Job) RunFacts {
	f := RunFacts{Working: !j.Status.Ended(), Folder: j.WorkDir, Tokens: int64(j.Usage.InputTokens + j.Usage.OutputTokens),
		LastActivity: j.UpdatedAt, FileChanges: len(j.Changes)}
	if j.EndedAt != nil {
		f.Ended = *j.EndedAt
	}
	for _, c := range j.Changes {
		f.Changed = append(f.Changed, c.Path)
	}
	f.Changed = append(f.Changed, s.outside.seen(j.ID)...)
	evs, err := s.cfg.Jobs.Events(ctx, j.ID, 0, 2000)
	if err != nil {
		return f
	}
	for _, ev := range evs {
		if ev.At.After(f.LastActivity) {
			f.LastActivity = ev.At
		}
		var tr jobs.Trace
		if json.Unmarshal(ev.Data, &tr) != nil {
			continue
		}
		if p := editedPath(tr.Tool, tr.Input); p != "" {
			f.Changed = append(f.Changed, p)
		}
		if tr.Failed {
			msg := tr.Output
			if msg == "" {
				msg = tr.Text
			}
			f.Failures = append(f.Failures, strings.TrimSpace(tr.Tool+" "+msg))
		}
	}
	return f
}

// raise gives the run's node one attention turn for a finding.
func (s *Service) raise(ctx context.Context, r nodeRun, j jobs.Job, f Finding) {
	op := "attention:" + r.ID + ":" + f.Rule
	err := s.cfg.Writer.Exec(ctx, func(tx *ledger.Tx) error {
		res, err := tx.ExecContext(tx.Context(), "UPDATE node_runs SET watchdog = json_set(watchdog, '$.'||?, ?) WHERE id = ? AND json_extract(watchdog, '$.'||?) IS NULL",
			f.Rule, op, r.ID, f.Rule)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return ledger.ErrNoChange
		}
		if err := sessionEventTx(tx, r.Root, r.NodeID, "attention", origin{who: "watchdog", source: "watchdog"}, r.JobID, f.Rule); err != nil {
			return err
		}
		note := fmt.Sprintf("The watchdog noticed something about the run “%s” (job %s, session %s): %s\n"+
			"Agents recover from errors by themselves: usually leave it. Steer (node_session_send, delivery steer) only when the same failure keeps happening and you know the fix, and never stop a run your owner asked for.",
			r.Title, j.ID, r.Root, f.Text)
		return s.enqueueTx(tx, Turn{NodeID: r.NodeID, RoomID: roomOfLane(r.Lane, r.RoomID), Lane: r.Lane, Private: r.Private,
			Reason: ReasonAttention, ByOwner: r.ByOwner, OperationID: op, Note: note})
	})
	if err == nil {
		s.wake() // raised already (ErrNoChange above commits nothing): a wake with nothing queued is harmless
	} else {
		s.log.Warn("node: raise a watchdog finding", "run", r.ID, "err", err)
	}
}
