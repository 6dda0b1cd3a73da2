package node

import (
	"cmp"
	"context"
	"errors"
	"fmt"

	"github.com/ensemblework/ensemble/runtime/ledger"
	"github.com/ensemblework/ensemble/runtime/problem"
	"github.com/ensemblework/ensemble/runtime/tools"
)

// The work tools (spec 002 §6.1): a node's own longer work, done in the background as a
// one-step plan in its work lane while it stays free to talk; it hears once when the work ends
// (the plan's report turn), and a correction or a stop reaches work it leads.
const (
	ToolWorkStart = "node_work_start"
	ToolWorkSteer = "node_work_steer"
	ToolWorkStop  = "node_work_stop"
)

var workTools = []string{ToolWorkStart, ToolWorkSteer, ToolWorkStop}

func init() {
	for _, name := range workTools {
		actingTools[name] = true
	}
}

type workStartIn struct {
	Title string `json:"title" jsonschema:"the work in a few words" check:"minLength=1,maxLength=200"`
	Brief string `json:"brief" jsonschema:"what to do and what to report, at most 1,500 characters" check:"minLength=1,maxLength=1500"`
	Kind  string `json:"kind,omitempty" jsonschema:"research (default), write, build or other" check:"enum=research|write|build|other"`
}

type workSteerIn struct {
	Work string `json:"work" jsonschema:"the work's id (msn_…), from node_work_start or the plan card" check:"minLength=1,maxLength=100"`
	Note string `json:"note" jsonschema:"the correction, for the work's next turn" check:"minLength=1,maxLength=2000"`
}

type workStopIn struct {
	Work string `json:"work" jsonschema:"the work's id (msn_…)" check:"minLength=1,maxLength=100"`
}

// workToolsFor are the work tools a turn offers: starting work in the owner's own conversation
// turns, correcting and stopping it in any turn the owner started.
func workToolsFor(t Turn) []string {
	switch {
	case !t.ByOwner:
		return nil
	case isConvLane(t.Lane):
		return workTools
	}
	return []string{ToolWorkSteer, ToolWorkStop}
}

func workToolDefs(def func(name, desc string) tools.Tool) []tools.Tool {
	return []tools.Tool{
		tools.Define(def(ToolWorkStart, "Start longer work you do yourself in the background (long research, a long check, a draft): you stay free to talk, and hear once, in a later turn, when it ends. Do not wait for it or announce each part."),
			tools.Typed[workStartIn]{Run: func(ctx context.Context, tc *tools.ToolContext, in workStartIn) (tools.Result, error) {
				c, err := turnOf(tc)
				if err != nil {
					return tools.Result{}, err
				}
				m, err := c.s.startWork(ctx, c, in)
				if err != nil {
					return tools.Result{}, err
				}
				return tools.Result{Summary: fmt.Sprintf("Started “%s” in the background as %s.", m.Goal, m.ID),
					Data: map[string]string{"work": m.ID, "note": "You hear once when it ends; reply to your owner now without waiting."}}, nil
			}}),
		tools.Define(def(ToolWorkSteer, "Correct work you lead (your own background work or a plan): its next turn reads the note."),
			tools.Typed[workSteerIn]{Run: func(ctx context.Context, tc *tools.ToolContext, in workSteerIn) (tools.Result, error) {
				c, err := turnOf(tc)
				if err != nil {
					return tools.Result{}, err
				}
				return c.s.steerWork(ctx, c, in)
			}}),
		tools.Define(def(ToolWorkStop, "Stop work you lead (your own background work or a plan): its turns and agent runs stop and nobody reports."),
			tools.Typed[workStopIn]{Run: func(ctx context.Context, tc *tools.ToolContext, in workStopIn) (tools.Result, error) {
				c, err := turnOf(tc)
				if err != nil {
					return tools.Result{}, err
				}
				m, err := c.s.ledMission(ctx, c.node.ID, in.Work)
				if err != nil {
					return tools.Result{}, err
				}
				if m.ended() {
					return tools.Result{Summary: fmt.Sprintf("“%s” had already ended: %s.", m.Goal, m.State)}, nil
				}
				if _, err := c.s.StopMission(ctx, m.ID); err != nil {
					return tools.Result{}, err
				}
				return tools.Result{Summary: fmt.Sprintf("Stopped “%s”.", m.Goal)}, nil
			}}),
	}
}

// startWork makes the node's own work a one-step plan it leads, in the room it was asked in.
func (s *Service) startWork(ctx context.Context, c *turnCtx, in workStartIn) (Mission, error) {
	t := c.rt.turn
	if !t.ByOwner || !isConvLane(t.Lane) {
		return Mission{}, problem.Invalid("Background work starts only from your owner's own request, where you talk with them.")
	}
	p, err := validatePlan(PlanInput{Goal: in.Title, Steps: []PlanStep{{ID: "work", To: c.node.Slug, Kind: cmp.Or(in.Kind, KindResearch), Brief: in.Brief}}},
		map[string]string{c.node.Slug: c.node.Role})
	if err != nil {
		return Mission{}, problem.Invalid("%s", err.Error())
	}
	room := c.room
	if !hasMember(room, c.node.ID) {
		room.Members = append(room.Members, RoomMember{NodeID: c.node.ID, Slug: c.node.Slug, Role: c.node.Role})
	}
	var m Mission
	err = s.cfg.Writer.Exec(ctx, func(tx *ledger.Tx) error {
		var err error
		m, err = s.createMissionTx(tx, room, c.node, p, true, t.ID)
		return err
	})
	if err != nil {
		return Mission{}, err
	}
	s.deliverSoon()
	return m, nil
}

func hasMember(r Room, nodeID string) bool {
	for _, m := range r.Members {
		if m.NodeID == nodeID {
			return true
		}
	}
	return false
}

// ledMission is the mission ref names when nodeID leads it; another's is not found.
func (s *Service) ledMission(ctx context.Context, nodeID, ref string) (Mission, error) {
	m, err := s.Mission(ctx, ref)
	if err != nil || m.LeadID != nodeID {
		return Mission{}, problem.NotFound("You lead no work %q; its id starts with msn_.", ref)
	}
	return m, nil
}

// steerWork hands a correction to each working step of work the node leads, as a turn in the
// step's lane and conversation; a step its agent is running hears it at its next attempt.
func (s *Service) steerWork(ctx context.Context, c *turnCtx, in workSteerIn) (tools.Result, error) {
	m, err := s.ledMission(ctx, c.node.ID, in.Work)
	if err != nil {
		return tools.Result{}, err
	}
	if m.ended() {
		return tools.Result{}, problem.Conflict("“%s” has already ended (%s); start new work instead.", m.Goal, m.State)
	}
	steered := 0
	err = s.cfg.Writer.Exec(ctx, func(tx *ledger.Tx) error {
		for i := range m.Steps {
			st := &m.Steps[i]
			if st.Status != StepWorking || st.Attempts[len(st.Attempts)-1].JobID != "" {
				continue
			}
			note := fmt.Sprintf("A correction from @%s for your step %s of “%s”:\n%s\n\nCarry on with it in mind, and end with node_step_report or node_step_blocked.",
				c.node.Slug, st.ID, m.Goal, in.Note)
			if err := s.enqueueTx(tx, Turn{NodeID: st.NodeID, RoomID: m.RoomID, Lane: "work:" + m.ID + ":" + st.ID + ":" + st.NodeID,
				Reason: ReasonPlan, ByOwner: true, Depth: 1, OperationID: "steer:" + ledger.NewID("stw_"),
				ConversationID: st.ConversationID, Note: note}); err != nil {
				return err
			}
			steered++
		}
		if steered == 0 {
			return errNothingToSteer
		}
		return nil
	})
	if errors.Is(err, errNothingToSteer) {
		return tools.Result{}, problem.Conflict("No step of “%s” is being worked on by a node now; a step an agent runs takes no correction mid-run: stop the work and start it again with it.", m.Goal)
	}
	if err != nil {
		return tools.Result{}, err
	}
	s.wake()
	return tools.Result{Summary: fmt.Sprintf("The correction goes to %s of “%s”.", plural(steered, "working step", "working steps"), m.Goal)}, nil
}

var errNothingToSteer = errors.New("node: nothing to steer")
