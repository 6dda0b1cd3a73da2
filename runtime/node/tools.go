package node

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/ensemblework/ensemble/runtime/assistant"
	"github.com/ensemblework/ensemble/runtime/ledger"
	"github.com/ensemblework/ensemble/runtime/records"
	"github.com/ensemblework/ensemble/runtime/tools"
)

// The node's own tools (spec 002 §6). They live in the assistant's registry under the node area,
// which only a node's turns offer; each reads its turn from the tool context.
const (
	ToolRemember    = "node_remember"
	ToolPost        = "node_post"
	ToolOverview    = "node_overview"
	ToolCreate      = "node_create"
	ToolCreateGroup = "node_create_group"
	ToolCrewAdd     = "node_crew_add"
	ToolDelegate    = "node_delegate"
)

// actingTools are the node tools that change something: a turn that ran one is resumed after a
// restart, never run again.
var actingTools = map[string]bool{ToolRemember: true, ToolPost: true, ToolCreate: true, ToolCreateGroup: true,
	ToolCrewAdd: true, ToolDelegate: true, ToolRoutines: true, ToolPlan: true, ToolStepReport: true, ToolStepBlocked: true}

// ownerOnly are offered only in turns the owner started.
var ownerOnly = map[string]bool{ToolRemember: true, ToolCreate: true, ToolCreateGroup: true, ToolCrewAdd: true}

// toolsFor are the node tools a turn offers, by need (spec 002 §6.1 tool tiers): a plain DM turn
// is not sent the schemas of tools it has no use for. Delegating is for a crew's lead; making
// nodes and crews for a turn whose words are about them; the session tools for the owner's turns
// about work on their computer, or where the node already drives sessions (codeTalk); a turn
// carrying on work (a card's answer, a report, a resume) keeps them all.
func toolsFor(t Turn, r Room, n Node, text string, codeTalk bool) []string {
	if n.ParentID != "" {
		return helperTools(n)
	}
	carryOn := t.Reason != ReasonMessage
	aboutNodes := carryOn || nodeWordsRe.MatchString(text)
	var out []string
	for _, name := range []string{ToolRemember, ToolPost, ToolOverview, ToolCreate, ToolCreateGroup, ToolCrewAdd, ToolDelegate, ToolRoutines} {
		switch {
		case name == ToolRoutines && (!offersRoutines(t, r) || !carryOn && !routineWordsRe.MatchString(text)):
			continue
		case ownerOnly[name] && !t.ByOwner:
			continue
		case name == ToolDelegate && (!isConvLane(t.Lane) || r.Kind != RoomCrew || r.Lead != n.ID):
			continue // a crew's lead hands work on; a delegated step does its own
		case (name == ToolCreate || name == ToolCreateGroup || name == ToolCrewAdd) && !aboutNodes:
			continue
		case name == ToolPost && r.Kind == RoomDM && !carryOn && !crewWordsRe.MatchString(text):
			continue
		}
		out = append(out, name)
	}
	if t.ByOwner && (carryOn || codeTalk || codeWordsRe.MatchString(text)) {
		out = append(out, sessionTools...) // where only the owner reads: every room here is the owner's alone
	}
	if t.Reason == ReasonQuestion {
		out = append(out, ToolAnswerQuestion) // a question turn is its owner's: the run was
	}
	if t.ByOwner && (carryOn || secretWordsRe.MatchString(text)) {
		out = append(out, ToolSecretHTTP, ToolSecretRequest)
	}
	if t.ByOwner && isConvLane(t.Lane) && (aboutNodes || helperWordsRe.MatchString(text)) {
		out = append(out, ToolHelper)
	}
	out = append(out, workToolsFor(t)...)
	out = append(out, terminalToolsFor(t, text)...)
	return append(out, planToolsFor(t, r, n)...)
}

var (
	nodeWordsRe   = regexp.MustCompile(`(?i)\b(nodes?|crews?|teams?|teammates?|helpers?|members?|researcher|developer|tester|writer|designer|analyst|manager)\b`)
	helperWordsRe = regexp.MustCompile(`(?i)\b(second opinion|audit|review|independent(ly)?|in parallel|side task)\b`)
	crewWordsRe   = regexp.MustCompile(`(?i)\b(crews?|post|tell|report|room)\b`)
	// codeWordsRe finds work for a coding agent: its words, an agent's name, or a path.
	codeWordsRe = regexp.MustCompile(`(?i)\b(code|coding|program|bugs?|fix(es|ed|ing)?|build|implement|refactor|tests?|repo|repository|folders?|directory|files?|projects?|agents?|claude|codex|cursor|copilot|gemini|opencode|sessions?|runs?|commit|branch|merge|pull request|PR|deploy|scripts?|functions?|compile|lint|write|change|update|add|apps?|site|website|server|steer|queue|stop)\b|~/|\B/[\w.-]+/|\.[a-z]{1,4}\b`)
)

var errNotNodeTurn = errors.New("This tool works only in a node's turn.")

// ownerTurn is turnOf for a tool used only in a turn its owner started, never a helper's (the
// computer, secrets, live views); refused says why, for the node.
func ownerTurn(tc *tools.ToolContext, refused string) (*turnCtx, error) {
	c, err := turnOf(tc)
	if err != nil {
		return nil, err
	}
	if !c.rt.turn.ByOwner || c.node.ParentID != "" {
		return nil, errors.New(refused)
	}
	return c, nil
}

func turnOf(tc *tools.ToolContext) (*turnCtx, error) {
	c, ok := tc.Turn.(*turnCtx)
	if !ok || c == nil {
		return nil, errNotNodeTurn
	}
	return c, nil
}

type rememberIn struct {
	Content string `json:"content" jsonschema:"the fact or preference to keep, in one or two sentences" check:"minLength=1,maxLength=500"`
}
type postIn struct {
	Room string `json:"room" jsonschema:"the id or title of another room you are in" check:"minLength=1,maxLength=200"`
	Body string `json:"body" jsonschema:"the message" check:"minLength=1,maxLength=20000"`
}
type overviewIn struct {
	Days int `json:"days,omitempty" jsonschema:"how many days ahead counts as due (7 by default)" check:"minimum=1,maximum=90"`
}
type createIn struct {
	Name       string `json:"name" jsonschema:"the new node's name" check:"minLength=1,maxLength=60"`
	Role       string `json:"role" jsonschema:"its role, such as developer or researcher" check:"minLength=1,maxLength=60"`
	Charter    string `json:"charter" jsonschema:"its standing instructions, in the second person" check:"maxLength=6000"`
	TemplateID string `json:"templateId,omitempty" jsonschema:"a template id (assistant, manager, developer, tester, writer, researcher, research-writer, designer, devops, analyst)" check:"maxLength=40"`
	Slug       string `json:"slug,omitempty" jsonschema:"its handle, without @" check:"maxLength=32"`
}
type createGroupIn struct {
	Title   string   `json:"title" jsonschema:"the crew's title" check:"minLength=1,maxLength=60"`
	Members []string `json:"members" jsonschema:"the handles of the nodes in it (they must exist)" check:"minItems=1,maxItems=24,items.maxLength=40"`
	Lead    string   `json:"lead,omitempty" jsonschema:"the handle of its lead" check:"maxLength=40"`
}
type crewAddIn struct {
	Node   string `json:"node" jsonschema:"the handle of the node to add (your own to add yourself)" check:"minLength=1,maxLength=40"`
	Crew   string `json:"crew,omitempty" jsonschema:"the crew's title or id; this turn's crew when left out" check:"maxLength=200"`
	Reason string `json:"reason" jsonschema:"why, in a sentence for your owner" check:"minLength=1,maxLength=500"`
}
type delegateIn struct {
	To    string `json:"to" jsonschema:"the handle of a node in this crew" check:"minLength=1,maxLength=40"`
	Brief string `json:"brief" jsonschema:"what it should do and what to report, at most 1,500 characters" check:"minLength=1,maxLength=1500"`
}

// Tools are the node tools, for the assistant's registry.
func Tools() []tools.Tool {
	read := func(name, desc string) tools.Tool {
		return tools.Tool{Name: name, Description: desc, Area: assistant.AgentArea, Risk: tools.RiskLow}
	}
	return append([]tools.Tool{
		tools.Define(read(ToolRemember, "Keep a short lasting fact or preference your owner gave you (\"always …\", \"only use …\"); later turns see it. Call it at once when they state one."),
			tools.Typed[rememberIn]{Run: func(ctx context.Context, tc *tools.ToolContext, in rememberIn) (tools.Result, error) {
				c, err := turnOf(tc)
				if err != nil {
					return tools.Result{}, err
				}
				if !c.rt.turn.ByOwner {
					return tools.Result{}, errors.New("Only your owner's own requests are remembered; this turn was started by someone else.")
				}
				m, err := c.s.Remember(ctx, c.node.ID, in.Content)
				if err != nil {
					return tools.Result{}, err
				}
				return tools.Result{Summary: "Remembered: " + m.Content, Data: m}, nil
			}}),
		tools.Define(read(ToolPost, "Post a message in another room you are in (a crew), for example to report back there. Not for the room this turn answers in: your reply goes there."),
			tools.Typed[postIn]{Run: func(ctx context.Context, tc *tools.ToolContext, in postIn) (tools.Result, error) {
				c, err := turnOf(tc)
				if err != nil {
					return tools.Result{}, err
				}
				return c.s.nodePost(ctx, c, in)
			}}),
		tools.Define(read(ToolOverview, "What your owner is working on: their open tasks, what is due soon or overdue, and their nodes' crews. Read-only."),
			tools.Typed[overviewIn]{Run: func(ctx context.Context, tc *tools.ToolContext, in overviewIn) (tools.Result, error) {
				c, err := turnOf(tc)
				if err != nil {
					return tools.Result{}, err
				}
				return c.s.overview(ctx, in.Days)
			}}),
		tools.Define(read(ToolCreate, "Propose a new lasting node for your owner, with its own DM, when they ask for one. It waits for their answer on a card unless they let you make nodes."),
			tools.Typed[createIn]{Run: func(ctx context.Context, tc *tools.ToolContext, in createIn) (tools.Result, error) {
				c, err := turnOf(tc)
				if err != nil {
					return tools.Result{}, err
				}
				return c.s.proposeNode(ctx, c, in)
			}}),
		tools.Define(read(ToolCreateGroup, "Propose a crew of your owner's existing nodes, when they ask. Every member must exist: propose missing ones with node_create first."),
			tools.Typed[createGroupIn]{Run: func(ctx context.Context, tc *tools.ToolContext, in createGroupIn) (tools.Result, error) {
				c, err := turnOf(tc)
				if err != nil {
					return tools.Result{}, err
				}
				return c.s.proposeCrew(ctx, c, in)
			}}),
		tools.Define(read(ToolCrewAdd, "Ask your owner, on a card, to add one of their nodes (or you) to a crew."),
			tools.Typed[crewAddIn]{Run: func(ctx context.Context, tc *tools.ToolContext, in crewAddIn) (tools.Result, error) {
				c, err := turnOf(tc)
				if err != nil {
					return tools.Result{}, err
				}
				return c.s.proposeCrewAdd(ctx, c, in)
			}}),
		tools.Define(read(ToolDelegate, "Hand a piece of the work to a node of this crew. It works on it in the background and you hear its result in a later turn; nothing is posted now."),
			tools.Typed[delegateIn]{Run: func(ctx context.Context, tc *tools.ToolContext, in delegateIn) (tools.Result, error) {
				c, err := turnOf(tc)
				if err != nil {
					return tools.Result{}, err
				}
				return c.s.delegate(ctx, c, in)
			}}),
		routinesTool(read),
		helperTool(read),
		secretHTTPTool(read),
		secretRequestTool(read),
	}, slices.Concat(SessionTools(), planTools(), workToolDefs(read), computerToolDefs(read), browserToolDefs(read), terminalToolDefs(read), []tools.Tool{liveViewTool(read)})...)
}

// nodePost posts the node's message in another room it is in.
func (s *Service) nodePost(ctx context.Context, c *turnCtx, in postIn) (tools.Result, error) {
	room, err := s.findRoomOf(ctx, c.node.ID, in.Room)
	if err != nil {
		return tools.Result{}, err
	}
	if room.ID == c.room.ID {
		return tools.Result{}, errors.New("Your reply already goes to this room; node_post is for another room you are in.")
	}
	err = s.cfg.Writer.Exec(ctx, func(tx *ledger.Tx) error {
		m := Message{RoomID: room.ID, Author: AuthorNode, NodeID: c.node.ID, Kind: KindText, Body: strings.TrimSpace(in.Body),
			Depth: c.rt.turn.Depth + 1, TurnID: c.rt.turn.ID}
		m, err := s.insertMessageTx(tx, m)
		if err != nil {
			return err
		}
		_, err = s.routeTx(tx, room, m)
		return err
	})
	if err != nil {
		return tools.Result{}, err
	}
	s.wake()
	return tools.Result{Summary: fmt.Sprintf("Posted in %s.", room.Title)}, nil
}

// findRoomOf finds a room the node is in by id or title (any case, "the X crew" finds X).
func (s *Service) findRoomOf(ctx context.Context, nodeID, ref string) (Room, error) {
	ref = strings.TrimSpace(ref)
	rooms, err := s.Rooms(ctx)
	if err != nil {
		return Room{}, err
	}
	bare := strings.TrimSpace(strings.TrimSuffix(strings.TrimPrefix(strings.ToLower(ref), "the "), " crew"))
	for _, r := range rooms {
		in := false
		for _, m := range r.Members {
			in = in || m.NodeID == nodeID
		}
		if in && (r.ID == ref || strings.EqualFold(r.Title, ref) || strings.EqualFold(r.Title, bare)) {
			return r, nil
		}
	}
	return Room{}, fmt.Errorf("You are in no room %q; your rooms are named in your instructions.", ref)
}

// overview is the owner's open and due work, and their crews.
func (s *Service) overview(ctx context.Context, days int) (tools.Result, error) {
	if days <= 0 {
		days = 7
	}
	if s.cfg.Records == nil {
		return tools.Result{Summary: "No records here."}, nil
	}
	ts, err := s.cfg.Records.ListTasks(ctx, records.TaskFilter{})
	if err != nil {
		return tools.Result{}, err
	}
	horizon := s.now().AddDate(0, 0, days).Format("2006-01-02")
	today := s.now().Format("2006-01-02")
	type item struct {
		ID, Title, Status, Due string
		Overdue                bool
	}
	var open, due []item
	var refs []tools.Ref
	for _, t := range ts {
		if t.Status == records.Done || t.Status == records.Dropped {
			continue
		}
		it := item{ID: t.ID, Title: t.Title, Status: string(t.Status)}
		if t.Due != nil {
			it.Due = *t.Due
			if it.Due <= horizon {
				it.Overdue = it.Due < today
				due = append(due, it)
			}
		}
		if len(open) < 30 {
			open = append(open, it)
			refs = append(refs, tools.Ref{Kind: "task", ID: t.ID, Title: t.Title})
		}
	}
	rooms, _ := s.Rooms(ctx)
	var crews []string
	for _, r := range rooms {
		if r.Kind == RoomCrew {
			crews = append(crews, r.Title)
		}
	}
	return tools.Result{
		Summary: fmt.Sprintf("%d open tasks, %d due within %d days.", len(open), len(due), days),
		Data:    map[string]any{"open": open, "due": due, "crews": crews, "asOf": s.now().Format(time.RFC3339)},
		Refs:    refs,
	}, nil
}

// talksOfCode reports whether the node already drives agent sessions, or the room's last few
// messages are about work for one: a "yes, go on" after them still reaches the session tools.
func (s *Service) talksOfCode(ctx context.Context, nodeID, roomID string) bool {
	db := s.cfg.Store.Reader()
	var one int
	if err := db.QueryRowContext(ctx, "SELECT 1 FROM node_runs WHERE node_id = ? LIMIT 1", nodeID).Scan(&one); err == nil {
		return true
	}
	bodies, err := queryAll(ctx, db, "read the room's last messages", "SELECT body FROM node_messages WHERE room_id = ? ORDER BY seq DESC LIMIT 6",
		[]any{roomID}, func(sc scanner) (string, error) {
			var b string
			return b, sc.Scan(&b)
		})
	return err == nil && codeWordsRe.MatchString(strings.Join(bodies, "\n"))
}

// helperTools are a helper's tools: it reads, and with its parent's sessions grant it runs its
// own agent session; it never makes, posts or remembers.
func helperTools(n Node) []string {
	out := []string{ToolOverview}
	if n.Autonomy.Can == CanSessions {
		out = append(out, sessionTools...)
	}
	return out
}
