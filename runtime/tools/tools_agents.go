package tools

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/ensemblework/ensemble/runtime/jobs"
	"github.com/ensemblework/ensemble/runtime/ledger"
	"github.com/ensemblework/ensemble/runtime/sessions"
)

// ErrNoRuns is what the agent tools say where no agents run (a runtime without runs).
var ErrNoRuns = errors.New("No coding agents run in this Ensemble, so work cannot be assigned or listed here.")

// assignInput is hub_assign_to_agent's input.
type assignInput struct {
	TaskID        string `json:"taskId" check:"minLength=1" jsonschema:"the task's id, ensemble:// link or exact title"`
	Agent         string `json:"agent,omitempty" jsonschema:"claude, codex, …"`
	Folder        string `json:"folder,omitempty" jsonschema:"absolute path or ~/…"`
	RepoURL       string `json:"repoUrl,omitempty" jsonschema:"a repository to clone as the run's folder, instead of a folder"`
	Model         string `json:"model,omitempty" jsonschema:"the agent's model; its default when left out"`
	Effort        string `json:"effort,omitempty" jsonschema:"the model's thinking level (low, medium, high…); its default when left out"`
	ContextTier   string `json:"contextTier,omitempty" check:"enum=standard|long" jsonschema:"the model's context window, for a model with a long one"`
	Fast          *bool  `json:"fast,omitempty" jsonschema:"the model's fast mode, for a model that has one (faster, uses more of the plan)"`
	ContinueRunID string `json:"continueRunId,omitempty" jsonschema:"an earlier run whose agent session this run continues"`
	SessionID     string `json:"sessionId,omitempty" jsonschema:"an agent session (from hub_list_agent_sessions) to continue"`
	Profile       string `json:"profile,omitempty" jsonschema:"a run profile's name or id; the default profile when left out"`
}

// assignment is an assignment checked against the records, the agents and the folders as they
// are now: what Preview describes and what Apply sends.
type assignment struct {
	title     string
	req       jobs.AssignRequest
	where     string // the folder as a person reads it, "" for the one the run gets
	profile   string // the run profile's name, "" for none (Quick settings)
	profileID string
}

// planAssign checks an assignment. It runs at preview and again at Apply, so an agent signed out
// or a folder removed in between refuses the Apply with the same sentence.
func planAssign(ctx context.Context, tc *ToolContext, in assignInput) (assignment, error) {
	if tc.Runs == nil {
		return assignment{}, ErrNoRuns
	}
	task, err := taskKind.live(ctx, tc, in.TaskID)
	if err != nil {
		return assignment{}, err
	}
	a := assignment{title: task.Title, req: jobs.AssignRequest{TaskID: task.ID, Agent: strings.TrimSpace(in.Agent),
		RepoURL: strings.TrimSpace(in.RepoURL), Continue: strings.TrimSpace(in.ContinueRunID), Actor: tc.Actor}}
	// The model and its choices keep all four, as the Assign dialog sends them (spec 003 §3.2);
	// the runner checks them again against the model and leaves out one it does not take.
	if in.Model != "" {
		a.req.Settings.Model = &in.Model
	}
	if in.Effort != "" {
		a.req.Settings.Effort = &in.Effort
	}
	if in.ContextTier != "" {
		a.req.Settings.ContextTier = &in.ContextTier
	}
	a.req.Settings.Fast = in.Fast
	if in.SessionID != "" {
		ss, err := tc.Runs.Session(ctx, strings.TrimSpace(in.SessionID))
		if err != nil {
			return assignment{}, fmt.Errorf("There is no agent session with that id; call hub_list_agent_sessions to find it.")
		}
		if !ss.Resumable {
			return assignment{}, fmt.Errorf("That %s session cannot be continued; assign without a session to start a new one.", agentTitle(ss.Agent))
		}
		a.req.Continue = ss.LastRun
	}
	if a.req.Continue != "" {
		earlier, err := tc.Runs.Run(ctx, a.req.Continue)
		if err != nil {
			return assignment{}, fmt.Errorf("There is no run with that id to continue; call hub_list_agent_sessions to find the session.")
		}
		if a.req.Agent == "" {
			a.req.Agent = earlier.Agent
		}
		if in.Folder == "" && a.req.RepoURL == "" {
			a.where = earlier.WorkDir
		}
	}
	if err := a.underProfile(ctx, tc, strings.TrimSpace(in.Profile)); err != nil {
		return assignment{}, err
	}
	if err := tc.Runs.CheckAgent(ctx, a.req.Agent); err != nil {
		return assignment{}, err
	}
	if in.Folder != "" && a.req.RepoURL != "" {
		return assignment{}, fmt.Errorf("Give either a folder or a repository URL, not both.")
	}
	if in.Folder != "" {
		dir, err := CheckFolder(in.Folder)
		if err != nil {
			return assignment{}, err
		}
		a.req.Folder, a.where = dir, dir
	}
	return a, nil
}

// underProfile fills what the assignment leaves out from the run profile ref names, else the
// default one (pickRunProfile: starred, else first saved); with none saved it stays as it is
// (Quick settings). A run continuing a session keeps that session's, so it takes no profile.
func (a *assignment) underProfile(ctx context.Context, tc *ToolContext, ref string) error {
	if a.req.Continue != "" {
		if ref != "" {
			return fmt.Errorf("A run that continues a session keeps that session's agent and folder; leave out the profile.")
		}
		return nil
	}
	pp, ok := tc.Runs.(ProfilePicker)
	if !ok {
		if ref != "" {
			return fmt.Errorf("This Ensemble keeps no run profiles; assign without one.")
		}
		return nil
	}
	p, found, err := pp.PickProfile(ctx, ref)
	if err != nil || !found {
		return err
	}
	a.profile, a.profileID = p.Name, p.ID
	a.req = p.Fill(a.req)
	if a.req.Folder != "" {
		a.where = a.req.Folder
	}
	return nil
}

// CheckFolder turns a folder the person named (~ for their home) into an absolute path, and says
// in a sentence when it is not a folder on this computer.
func CheckFolder(name string) (string, error) {
	dir := strings.TrimSpace(name)
	if home, err := os.UserHomeDir(); err == nil && (dir == "~" || strings.HasPrefix(dir, "~/")) {
		dir = filepath.Join(home, strings.TrimPrefix(dir, "~"))
	}
	if !filepath.IsAbs(dir) {
		return "", fmt.Errorf("The folder %q must be an absolute path (or start with ~/).", name)
	}
	fi, err := os.Stat(dir)
	if err != nil {
		return "", fmt.Errorf("The folder %s does not exist on this computer.", name)
	}
	if !fi.IsDir() {
		return "", fmt.Errorf("%s is not a folder.", name)
	}
	return filepath.Clean(dir), nil
}

// HomeShort writes a path under the person's home as ~/…, as a preview names a folder.
func HomeShort(dir string) string {
	home, err := os.UserHomeDir()
	if err != nil || home == "" {
		return dir
	}
	if rel, err := filepath.Rel(home, dir); err == nil && rel != ".." && !strings.HasPrefix(rel, "../") {
		if rel == "." {
			return "~"
		}
		return "~/" + filepath.ToSlash(rel)
	}
	return dir
}

// agentTitle is an agent's name as a person reads it: "codex" is Codex.
func agentTitle(agent string) string {
	if agent == "" {
		return "the agent"
	}
	return strings.ToUpper(agent[:1]) + agent[1:]
}

func (a assignment) preview() string {
	var b strings.Builder
	fmt.Fprintf(&b, "Assign “%s” to %s", a.title, agentTitle(a.req.Agent))
	switch {
	case a.req.RepoURL != "":
		fmt.Fprintf(&b, " in a clone of %s", a.req.RepoURL)
	case a.where != "":
		fmt.Fprintf(&b, " in %s", HomeShort(a.where))
	}
	if a.req.Continue != "" {
		b.WriteString(", continuing its earlier session")
	}
	if choices := a.choices(); choices != "" {
		fmt.Fprintf(&b, " (%s)", choices)
	}
	if a.profile != "" {
		fmt.Fprintf(&b, ", under the run profile “%s”", a.profile)
	}
	b.WriteString(".")
	return b.String()
}

// prepareAssign fixes what an assignment would otherwise leave to the moment it runs: the task by
// its id, the agent, and the run profile (the default one, when none is named), so Apply starts
// the run the person saw previewed even if the default profile changes in between.
func prepareAssign(ctx context.Context, tc *ToolContext, in assignInput) (map[string]any, error) {
	a, err := planAssign(ctx, tc, in)
	if err != nil {
		return nil, err
	}
	fixed := map[string]any{}
	for k, v := range map[string]string{"taskId": a.req.TaskID, "agent": a.req.Agent, "profile": a.profileID} {
		if v != "" {
			fixed[k] = v
		}
	}
	return fixed, nil
}

func assignToAgentTool() Tool {
	return typedTool(Tool{
		Name: "hub_assign_to_agent",
		Area: "agents",
		// It starts an agent run, which spends the person's time and money and which Undo cannot
		// take back.
		Risk:     RiskHigh,
		Undoable: NoUndo,
		Description: "Assign a task to a coding agent on this computer: it starts a run of the agent on the task. " +
			"Always waits for the person's Apply. Name the agent (as hub_list_agent_sessions shows them, e.g. claude, codex) and the folder to work in " +
			"(an absolute path or ~/…; without one the run gets the task's project folder or a fresh one). " +
			"To go on in an earlier agent session, pass its sessionId from hub_list_agent_sessions. " +
			"The run takes the run profile named in profile, else the person's default profile (the starred one, else the first saved): " +
			"its agent, folder and settings, except what you name here.",
		AlwaysHold: true,
	}, Typed[assignInput]{
		Prepare: prepareAssign,
		Preview: func(ctx context.Context, tc *ToolContext, in assignInput) (string, error) {
			a, err := planAssign(ctx, tc, in)
			if err != nil {
				return "", err
			}
			return a.preview(), nil
		},
		Outside: func(ctx context.Context, tc *ToolContext, in assignInput, claim func(*ledger.Tx, Result) error) (Result, error) {
			a, err := planAssign(ctx, tc, in)
			if err != nil {
				return Result{}, err
			}
			var res Result
			a.req.Within = func(tx *ledger.Tx, j jobs.Job) error {
				res = Result{
					Summary: fmt.Sprintf("Assigned “%s” to %s; the run is queued.", a.title, agentTitle(j.Agent)),
					Data:    map[string]any{"taskId": j.TaskID, "runId": j.ID, "status": j.Status, "workDir": j.WorkDir},
					Refs:    []Ref{{Kind: "task", ID: j.TaskID, Title: a.title}, {Kind: "run", ID: j.ID, Title: a.title}},
				}
				return claim(tx, res)
			}
			if _, err := tc.Runs.Assign(ctx, a.req); err != nil {
				return Result{}, err
			}
			return res, nil
		},
	})
}

// sessionRow is one agent session as hub_list_agent_sessions returns it.
type sessionRow struct {
	ID         string `json:"id"`
	Agent      string `json:"agent"`
	Folder     string `json:"folder"`
	Task       string `json:"task"` // the latest task's title
	TaskID     string `json:"taskId"`
	LastRun    string `json:"lastRun"`
	Status     string `json:"status"`
	Summary    string `json:"summary,omitempty"` // how the latest run ended, in one line
	Resumable  bool   `json:"resumable"`
	LastActive string `json:"lastActive"`
}

// listSessionsIn is hub_list_agent_sessions' input.
type listSessionsIn struct {
	Agent  string `json:"agent,omitempty"`
	TaskID string `json:"taskId,omitempty"`
	Query  string `json:"query,omitempty" jsonschema:"words in its tasks, summary or folder"`
	Offset int    `json:"offset,omitempty" check:"minimum=0"`
}

func listAgentSessionsTool() Tool {
	return typedTool(Tool{
		Name:        "hub_list_agent_sessions",
		Area:        "agents",
		Risk:        RiskLow,
		Description: "List the person's coding-agent sessions, newest first: agent, folder, latest task, last run, status and how it ended. Narrow by agent, task or words. Pass a session's id to hub_assign_to_agent as sessionId to continue it.",
	}, Typed[listSessionsIn]{
		Run: func(ctx context.Context, tc *ToolContext, in listSessionsIn) (Result, error) {
			if tc.Runs == nil {
				return Result{}, ErrNoRuns
			}
			list, err := tc.Runs.Sessions(ctx, sessions.Filter{TaskID: bareID(in.TaskID, "task"), Q: in.Query, Limit: 200})
			if err != nil {
				return Result{}, err
			}
			all := make([]sessionRow, 0, len(list))
			for _, ss := range list {
				if in.Agent != "" && !strings.EqualFold(ss.Agent, strings.TrimSpace(in.Agent)) {
					continue
				}
				all = append(all, sessionRow{ID: ss.ID, Agent: ss.Agent, Folder: ss.Folder, Task: ss.LatestTask.Title,
					TaskID: ss.LatestTask.ID, LastRun: ss.LastRun, Status: string(ss.Status), Summary: ss.Summary,
					Resumable: ss.Resumable, LastActive: ss.LastActive.UTC().Format(time.RFC3339)})
			}
			rows, note := fitList(all, in.Offset, "hub_list_agent_sessions", "sessions")
			if len(all) == 0 {
				return Result{Summary: "No agent sessions found.", Data: listData("sessions", rows, 0, note)}, nil
			}
			var titles []string
			for _, r := range rows {
				titles = append(titles, fmt.Sprintf("%s on “%s”", agentTitle(r.Agent), r.Task))
			}
			return Result{Summary: fmt.Sprintf("Found %s: %s.", Plural(len(all), "agent session"), strings.Join(titles, ", ")),
				Data: listData("sessions", rows, len(all), note)}, nil
		},
	})
}

// choices are the model choices an assignment names, as the preview says them.
func (a assignment) choices() string {
	st := a.req.Settings
	var parts []string
	if st.Model != nil && *st.Model != "" {
		parts = append(parts, "model "+*st.Model)
	}
	if st.Effort != nil && *st.Effort != "" {
		parts = append(parts, "thinking "+*st.Effort)
	}
	if st.ContextTier != nil && *st.ContextTier == "long" {
		parts = append(parts, "long context")
	}
	if st.Fast != nil && *st.Fast {
		parts = append(parts, "fast mode")
	}
	return strings.Join(parts, ", ")
}
