package node

import (
	"cmp"
	"context"
	"fmt"
	"strings"

	"github.com/ensemblework/ensemble/runtime/assistant"
	"github.com/ensemblework/ensemble/runtime/ledger"
	"github.com/ensemblework/ensemble/runtime/tools"
)

// The session tools (spec 002 §8.1–§8.4): a node drives its owner's coding agents through them.
// They are offered only in turns its owner started, where only the owner reads.
const (
	ToolSessionStart    = "node_session_start"
	ToolSessionSend     = "node_session_send"
	ToolSessionStop     = "node_session_stop"
	ToolSessionQueue    = "node_session_queue"
	ToolSessions        = "node_sessions"
	ToolSessionAdopt    = "node_session_adopt"
	ToolSessionHandOver = "node_session_hand_over"
)

// sessionTools are the session tools, in the order a turn offers them.
var sessionTools = []string{ToolSessionStart, ToolSessionSend, ToolSessionStop, ToolSessionQueue, ToolSessions,
	ToolSessionAdopt, ToolSessionHandOver, ToolSessionDelete}

func init() {
	for _, name := range sessionTools {
		if name != ToolSessions {
			actingTools[name] = true
		}
		ownerOnly[name] = true
	}
}

type sessionStartIn struct {
	Title      string `json:"title" jsonschema:"a short title for the work" check:"minLength=1,maxLength=200"`
	Prompt     string `json:"prompt" jsonschema:"what the agent should do, in full: it sees nothing of this conversation" check:"minLength=1,maxLength=100000"`
	TaskID     string `json:"taskId,omitempty" jsonschema:"a task of your owner's board the run belongs to" check:"maxLength=200"`
	Agent      string `json:"agent,omitempty" jsonschema:"the coding agent (claude, codex, …); the run profile's when left out" check:"maxLength=40"`
	Folder     string `json:"folder,omitempty" jsonschema:"the folder to work in, an absolute path or ~/…" check:"maxLength=1000"`
	RepoURL    string `json:"repoUrl,omitempty" jsonschema:"a repository to clone as the run's folder, instead of a folder" check:"maxLength=1000"`
	Model      string `json:"model,omitempty" jsonschema:"the agent's model; its default when left out" check:"maxLength=100"`
	Effort     string `json:"effort,omitempty" jsonschema:"the model's thinking level (low, medium, high…)" check:"maxLength=20"`
	Context    string `json:"context,omitempty" jsonschema:"the context window: standard or long" check:"enum=standard|long"`
	NewSession bool   `json:"newSession,omitempty" jsonschema:"start a new session even if one of yours fits"`
	Profile    string `json:"profile,omitempty" jsonschema:"a run profile's name or id; your owner's default when left out" check:"maxLength=200"`
}

type sessionSendIn struct {
	Session  string `json:"session" jsonschema:"the session's id, from node_sessions" check:"minLength=1,maxLength=100"`
	Prompt   string `json:"prompt" jsonschema:"the message to the agent" check:"minLength=1,maxLength=100000"`
	Title    string `json:"title,omitempty" jsonschema:"a short title for it" check:"maxLength=200"`
	Delivery string `json:"delivery,omitempty" jsonschema:"queue (default): after what is queued; steer: change the run going on now; replace: drop the queue and stop the run going on, then run this" check:"enum=queue|steer|replace"`
	Model    string `json:"model,omitempty" jsonschema:"a model for this message; the session's when left out" check:"maxLength=100"`
	Effort   string `json:"effort,omitempty" jsonschema:"a thinking level for this message; the session's when left out" check:"maxLength=20"`
	Context  string `json:"context,omitempty" jsonschema:"standard or long; the session's when left out" check:"enum=standard|long"`
}

type sessionStopIn struct {
	Session string `json:"session" jsonschema:"the session's id" check:"minLength=1,maxLength=100"`
	Queued  string `json:"queued,omitempty" jsonschema:"drop (default): take out what is queued too; keep: let it run next" check:"enum=drop|keep"`
}

type sessionQueueIn struct {
	Session string   `json:"session" jsonschema:"the session's id" check:"minLength=1,maxLength=100"`
	Order   []string `json:"order,omitempty" jsonschema:"every queued message's id, in the new order" check:"maxItems=100,items.maxLength=100"`
	Cancel  []string `json:"cancel,omitempty" jsonschema:"the ids of queued messages to take out" check:"maxItems=100,items.maxLength=100"`
}

type sessionsIn struct{}

type sessionRefIn struct {
	Session string `json:"session" jsonschema:"the session's id (from hub_list_agent_sessions for one no node manages)" check:"minLength=1,maxLength=100"`
}

type handOverIn struct {
	Session string `json:"session" jsonschema:"the session's id" check:"minLength=1,maxLength=100"`
	To      string `json:"to" jsonschema:"the handle of another of your owner's nodes" check:"minLength=1,maxLength=40"`
	Note    string `json:"note,omitempty" jsonschema:"why, for the node it goes to" check:"maxLength=500"`
}

// SessionTools are the session tools, for the assistant's registry (appended to Tools).
func SessionTools() []tools.Tool {
	def := func(name, desc string) tools.Tool {
		return tools.Tool{Name: name, Description: desc, Area: assistant.AgentArea, Risk: tools.RiskLow}
	}
	return []tools.Tool{
		tools.Define(def(ToolSessionStart, "Start work in one of your owner's coding agents on this computer: a new agent session with a first run. "+
			"The run profile (the one named, else your owner's default) decides the agent, folder and settings unless you name them. "+
			"Without newSession, when one of your sessions fits the work it starts nothing and names it: continue it with node_session_send, or call again with newSession: true. "+
			"You hear how the run ended in a later turn; do not wait for it."),
			tools.Typed[sessionStartIn]{Run: func(ctx context.Context, tc *tools.ToolContext, in sessionStartIn) (tools.Result, error) {
				c, err := turnOf(tc)
				if err != nil {
					return tools.Result{}, err
				}
				return c.s.toolStart(ctx, c, in)
			}}),
		tools.Define(def(ToolSessionSend, "Send a message to one of your agent sessions: queue (default) runs it after what is queued, steer changes the run going on, replace drops the queue and stops the run going on, then runs this."),
			tools.Typed[sessionSendIn]{Run: func(ctx context.Context, tc *tools.ToolContext, in sessionSendIn) (tools.Result, error) {
				c, root, err := turnSession(ctx, tc, in.Session)
				if err != nil {
					return tools.Result{}, err
				}
				if c.node.Autonomy.ComputerWork == "ask" {
					delivery := cmp.Or(in.Delivery, DeliverQueue)
					body := fmt.Sprintf("%s asks to send session %s (%s): %s", c.node.Name, root, delivery, oneLineOf(in.Prompt, 300))
					return c.s.cardAndWait(ctx, c, body, Card{Type: "session", RoomID: turnOrigin(c).roomID,
						Session: &SessionCall{Send: &SendCall{Session: root, Title: in.Title, Prompt: in.Prompt, Delivery: delivery, Settings: in.settings()}}})
				}
				r, err := c.s.sendWith(ctx, turnOrigin(c), root, in.Title, in.Prompt, in.Delivery, in.settings())
				if err != nil {
					return tools.Result{}, err
				}
				what := "Queued in the session"
				if r.State == runStarted {
					what = "Started in the session as job " + r.JobID
				}
				return tools.Result{Summary: fmt.Sprintf("%s: “%s”. You hear how it ended in a later turn.", what, r.Title),
					Data: map[string]any{"session": root, "message": r.ID, "jobId": r.JobID, "state": r.State}}, nil
			}}),
		tools.Define(def(ToolSessionStop, "Stop the run going on in one of your agent sessions, and what is queued unless queued: keep. Never stop a run your owner asked for unless they say so."),
			tools.Typed[sessionStopIn]{Run: func(ctx context.Context, tc *tools.ToolContext, in sessionStopIn) (tools.Result, error) {
				c, root, err := turnSession(ctx, tc, in.Session)
				if err != nil {
					return tools.Result{}, err
				}
				stopped, dropped, err := c.s.stopSession(ctx, turnOrigin(c), root, in.Queued == "keep")
				if err != nil {
					return tools.Result{}, err
				}
				return tools.Result{Summary: stopSummary(stopped, dropped)}, nil
			}}),
		tools.Define(def(ToolSessionQueue, "Reorder the queued messages of one of your agent sessions (order: every queued id, in the new order) or take some out (cancel). An order made from a queue that changed since is refused."),
			tools.Typed[sessionQueueIn]{Run: func(ctx context.Context, tc *tools.ToolContext, in sessionQueueIn) (tools.Result, error) {
				c, root, err := turnSession(ctx, tc, in.Session)
				if err != nil {
					return tools.Result{}, err
				}
				if err := c.s.editQueue(ctx, turnOrigin(c), root, in.Order, in.Cancel); err != nil {
					return tools.Result{}, err
				}
				return tools.Result{Summary: "The session's queue is changed."}, nil
			}}),
		tools.Define(def(ToolSessions, "Your agent sessions: each one's agent, folder, status, the message running and what is queued. Read-only; the only sessions you may drive."),
			tools.Typed[sessionsIn]{Run: func(ctx context.Context, tc *tools.ToolContext, _ sessionsIn) (tools.Result, error) {
				c, err := turnOf(tc)
				if err != nil {
					return tools.Result{}, err
				}
				list, err := c.s.NodeSessions(ctx, c.node.ID)
				if err != nil {
					return tools.Result{}, err
				}
				if len(list) == 0 {
					return tools.Result{Summary: "You have no agent sessions.", Data: map[string]any{"sessions": list}}, nil
				}
				return tools.Result{Summary: fmt.Sprintf("You have %s.", plural(len(list), "agent session", "agent sessions")),
					Data: map[string]any{"sessions": list}}, nil
			}}),
		tools.Define(def(ToolSessionAdopt, "Take over an agent session no node manages (started in the Hub or the CLI), so you can send it messages."),
			tools.Typed[sessionRefIn]{Run: func(ctx context.Context, tc *tools.ToolContext, in sessionRefIn) (tools.Result, error) {
				c, err := turnOf(tc)
				if err != nil {
					return tools.Result{}, err
				}
				root, err := c.s.sessionRoot(ctx, c.s.cfg.Store.Reader(), in.Session)
				if err != nil {
					return tools.Result{}, err
				}
				if err := c.s.moveSession(ctx, turnOrigin(c), root, "", c.node.ID); err != nil {
					return tools.Result{}, err
				}
				return tools.Result{Summary: "The session " + root + " is yours now."}, nil
			}}),
		tools.Define(def(ToolSessionHandOver, "Hand one of your agent sessions to another of your owner's nodes; you no longer see it after."),
			tools.Typed[handOverIn]{Run: func(ctx context.Context, tc *tools.ToolContext, in handOverIn) (tools.Result, error) {
				c, root, err := turnSession(ctx, tc, in.Session)
				if err != nil {
					return tools.Result{}, err
				}
				to, err := c.s.Node(ctx, in.To)
				if err != nil {
					return tools.Result{}, err
				}
				if to.ID == c.node.ID {
					return tools.Result{}, fmt.Errorf("The session is already yours.")
				}
				if err := c.s.moveSession(ctx, turnOrigin(c), root, c.node.ID, to.ID); err != nil {
					return tools.Result{}, err
				}
				return tools.Result{Summary: fmt.Sprintf("Handed the session %s to @%s.", root, to.Slug)}, nil
			}}),
		sessionDeleteTool(def),
		answerQuestionTool(def),
	}
}

func stopSummary(stopped, dropped int) string {
	switch {
	case stopped == 0 && dropped == 0:
		return "Nothing was running or queued in the session."
	case dropped == 0:
		return "Stopped the run going on."
	case stopped == 0:
		return fmt.Sprintf("Took %s out of the queue; nothing was running.", plural(dropped, "message", "messages"))
	}
	return fmt.Sprintf("Stopped the run going on and took %s out of the queue.", plural(dropped, "message", "messages"))
}

// toolStart is node_session_start.
func (s *Service) toolStart(ctx context.Context, c *turnCtx, in sessionStartIn) (tools.Result, error) {
	folder := ""
	if in.Folder != "" {
		dir, err := tools.CheckFolder(in.Folder)
		if err != nil {
			return tools.Result{}, err
		}
		folder = dir
	}
	req := RunRequest{Title: in.Title, Prompt: in.Prompt, TaskID: in.TaskID, Agent: in.Agent, Folder: folder, RepoURL: in.RepoURL,
		Model: in.Model, Effort: in.Effort, Context: in.Context, Profile: in.Profile, NewSession: in.NewSession}
	ask := c.node.Autonomy.ComputerWork == "ask"
	req.check = ask
	j, fits, err := s.startSession(ctx, turnOrigin(c), req)
	if err != nil {
		return tools.Result{}, err
	}
	if len(fits) > 0 {
		var lines []string
		for _, f := range fits {
			lines = append(lines, fmt.Sprintf("session %s: %s (%s)", f.Session, f.Did, f.Why))
		}
		return tools.Result{Summary: "Not started yet: one of your sessions fits this work, " + strings.Join(lines, "; ") +
			". Continue it with node_session_send (it keeps what the agent learned and costs less), or call node_session_start again with newSession: true.",
			Data: map[string]any{"fits": fits}}, nil
	}
	if ask {
		// Run exactly as shown when approved: the agent and folder fixed, no session chosen then.
		req.check, req.NewSession, req.Agent, req.Folder, req.Profile = false, true, j.Agent, j.Folder, ""
		where := "a folder of its own"
		if j.Folder != "" {
			where = tools.HomeShort(j.Folder)
		}
		body := fmt.Sprintf("%s asks to start %s on “%s” in %s: %s", c.node.Name, agentName(j.Agent), in.Title, where, oneLineOf(in.Prompt, 300))
		return s.cardAndWait(ctx, c, body, Card{Type: "session", RoomID: turnOrigin(c).roomID, Session: &SessionCall{Start: &req}})
	}
	return tools.Result{Summary: fmt.Sprintf("Started “%s” with %s in %s (session %s). You hear how it ended in a later turn; do not wait for it.",
		in.Title, agentName(j.Agent), tools.HomeShort(j.WorkDir), j.ID),
		Data: map[string]any{"session": j.ID, "jobId": j.ID, "agent": j.Agent, "folder": j.WorkDir, "status": j.Status}}, nil
}

// NodeSessions are the sessions that belong to a node, most recently active first.
func (s *Service) NodeSessions(ctx context.Context, nodeID string) ([]SessionInfo, error) {
	db := s.cfg.Store.Reader()
	rows, err := db.QueryContext(ctx, `SELECT session_root FROM (SELECT session_root, created_at FROM node_runs
		UNION ALL SELECT session_root, created_at FROM node_session_events WHERE kind = 'adopt') GROUP BY session_root ORDER BY max(created_at) DESC`)
	if err != nil {
		return nil, err
	}
	var roots []string
	for rows.Next() {
		var r string
		rows.Scan(&r)
		roots = append(roots, r)
	}
	rows.Close()
	out := []SessionInfo{}
	for _, root := range roots {
		owner, err := sessionOwner(ctx, db, root)
		if err != nil {
			return nil, err
		}
		if nodeID != "" && owner != nodeID {
			continue
		}
		info, err := s.sessionInfo(ctx, db, root)
		if err != nil {
			return nil, err
		}
		out = append(out, info)
	}
	return out, nil
}

// SessionCall is a session tool's call held on a card for the owner (autonomy.computerWork:
// ask), run exactly as shown when approved.
type SessionCall struct {
	Start  *RunRequest `json:"start,omitempty"`
	Send   *SendCall   `json:"send,omitempty"`
	Delete *DeleteCall `json:"delete,omitempty"`
}

// SendCall is a held node_session_send.
type SendCall struct {
	Session  string     `json:"session"`
	Title    string     `json:"title,omitempty"`
	Prompt   string     `json:"prompt"`
	Delivery string     `json:"delivery"`
	Settings SettingSet `json:"settings,omitzero"`
}

func (in sessionSendIn) settings() SettingSet {
	return SettingSet{Model: in.Model, Effort: in.Effort, Context: in.Context}
}

// sessionCardWork runs an approved session card's call, as the node, in the thread it asked from.
func (s *Service) sessionCardWork(ctx context.Context, c Card) (string, error) {
	if c.Session == nil {
		return "", fmt.Errorf("the card holds no session call")
	}
	n, err := s.Node(ctx, c.NodeID)
	if err != nil {
		return "", err
	}
	o := origin{node: n, roomID: roomOfLane(c.Lane, c.RoomID), lane: c.Lane, turnID: c.TurnID, private: c.Private,
		byOwner: c.ByOwner, who: "node", source: "chat", depth: c.Depth}
	switch {
	case c.Session.Start != nil:
		j, _, err := s.startSession(ctx, o, *c.Session.Start)
		if err != nil {
			return "", err
		}
		return fmt.Sprintf("Started “%s” with %s in %s (session %s). You hear how it ended in a later turn.",
			c.Session.Start.Title, agentName(j.Agent), tools.HomeShort(j.WorkDir), j.ID), nil
	case c.Session.Send != nil:
		sc := c.Session.Send
		root, err := s.ownSession(ctx, s.cfg.Store.Reader(), n.ID, sc.Session)
		if err != nil {
			return "", err
		}
		r, err := s.sendWith(ctx, o, root, sc.Title, sc.Prompt, sc.Delivery, sc.Settings)
		if err != nil {
			return "", err
		}
		return fmt.Sprintf("Sent “%s” to session %s (%s).", r.Title, root, r.State), nil
	case c.Session.Delete != nil:
		root, err := s.ownSession(ctx, s.cfg.Store.Reader(), n.ID, c.Session.Delete.Session)
		if err != nil {
			return "", err
		}
		if err := s.deleteSession(ctx, o, root, ledger.Actor{Kind: ledger.Person}); err != nil {
			return "", err
		}
		return fmt.Sprintf("Deleted the agent session %s; it will not be continued.", root), nil
	}
	return "", fmt.Errorf("the card holds no session call")
}

// turnSession is the turn a session tool runs in and the session it names, which must be the
// turn's node's own.
func turnSession(ctx context.Context, tc *tools.ToolContext, ref string) (*turnCtx, string, error) {
	c, err := turnOf(tc)
	if err != nil {
		return nil, "", err
	}
	root, err := c.s.ownSession(ctx, c.s.cfg.Store.Reader(), c.node.ID, ref)
	return c, root, err
}
