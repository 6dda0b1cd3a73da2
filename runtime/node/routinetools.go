package node

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/ensemblework/ensemble/runtime/tools"
)

// ToolRoutines is the owner's routines for this node, when they ask (spec 002 §6.5).
const ToolRoutines = "node_routines"

// routineWordsRe: a turn whose words are about routines is offered node_routines.
var routineWordsRe = regexp.MustCompile(`(?i)\b(routines?|schedules?|scheduled|every|daily|weekly|hourly|each (morning|evening|day|week)|webhooks?|cron)\b`)

type routinesIn struct {
	Action      string `json:"action" jsonschema:"list, create, pause, resume, delete or run_now" check:"enum=list|create|pause|resume|delete|run_now"`
	Routine     string `json:"routine,omitempty" jsonschema:"the routine's id or title (pause, resume, delete, run_now)" check:"maxLength=200"`
	Instruction string `json:"instruction,omitempty" jsonschema:"create: what you do each time, in your owner's words" check:"maxLength=6000"`
	Cron        string `json:"cron,omitempty" jsonschema:"create: a five-field schedule (minute hour day month weekday), such as 0 9 * * 1-5" check:"maxLength=100"`
	Timezone    string `json:"timezone,omitempty" jsonschema:"create: the schedule's IANA time zone; this computer's when not given" check:"maxLength=64"`
	On          string `json:"on,omitempty" jsonschema:"create: run when tasks or pages change: task or page" check:"maxLength=8"`
	Webhook     bool   `json:"webhook,omitempty" jsonschema:"create: run when its webhook is called"`
	Notify      string `json:"notify,omitempty" jsonschema:"create: always, needed (only when something failed, changed or needs your owner) or never" check:"maxLength=8"`
}

func routinesTool(read func(name, desc string) tools.Tool) tools.Tool {
	return tools.Define(read(ToolRoutines, "Your owner's routines for you: work you do by yourself on a schedule, when tasks or pages change, or when a webhook calls. List, create, pause, resume, delete or run one now, only when your owner asks."),
		tools.Typed[routinesIn]{Run: func(ctx context.Context, tc *tools.ToolContext, in routinesIn) (tools.Result, error) {
			c, err := turnOf(tc)
			if err != nil {
				return tools.Result{}, err
			}
			return c.s.nodeRoutines(ctx, c, in)
		}})
}

// offersRoutines: node_routines is for a turn its owner started where the owner reads alone.
func offersRoutines(t Turn, r Room) bool {
	return t.ByOwner && isConvLane(t.Lane) && (r.Kind == RoomDM || t.Private)
}

func (s *Service) nodeRoutines(ctx context.Context, c *turnCtx, in routinesIn) (tools.Result, error) {
	if !offersRoutines(c.rt.turn, c.room) {
		return tools.Result{}, errors.New("Routines are made where only your owner reads: in your DM, at their request.")
	}
	mine, err := s.Routines(ctx, c.node.ID)
	if err != nil {
		return tools.Result{}, err
	}
	if in.Action == "list" {
		var lines []string
		for _, r := range mine {
			lines = append(lines, fmt.Sprintf("%s “%s”: %s, %s, notify %s", r.ID, r.Title, r.Trigger.Kind, r.Status, r.Notify))
		}
		if len(lines) == 0 {
			return tools.Result{Summary: "You have no routines."}, nil
		}
		return tools.Result{Summary: fmt.Sprintf("%d routines", len(mine)), Data: map[string]any{"routines": lines}}, nil
	}
	if in.Action == "create" {
		tr := Trigger{Kind: TriggerSchedule, Cron: in.Cron, Timezone: in.Timezone}
		switch {
		case in.On != "":
			tr = Trigger{Kind: TriggerEvent, On: in.On}
		case in.Webhook:
			tr = Trigger{Kind: TriggerWebhook}
		case in.Cron == "":
			return tools.Result{}, errors.New("Give the routine a trigger: cron, on (task or page) or webhook.")
		}
		r, err := s.CreateRoutine(ctx, NewRoutine{Node: c.node.ID, Instruction: in.Instruction, Trigger: tr, Notify: in.Notify, RoomID: c.room.ID})
		if err != nil {
			return tools.Result{}, err
		}
		sum := fmt.Sprintf("Made the routine “%s” (%s).", r.Title, r.ID)
		if r.Trigger.Kind == TriggerWebhook {
			sum += " Its webhook token is not given to you: your owner gets one by renewing it on the routine in Node."
		}
		return tools.Result{Summary: sum, Data: map[string]any{"id": r.ID, "nextAt": r.NextAt}}, nil
	}
	var r *Routine
	for i := range mine {
		if mine[i].ID == in.Routine || strings.EqualFold(mine[i].Title, strings.TrimSpace(in.Routine)) {
			r = &mine[i]
		}
	}
	if r == nil {
		return tools.Result{}, fmt.Errorf("You have no routine %q; list them first.", in.Routine)
	}
	switch in.Action {
	case "pause", "resume":
		st := map[string]string{"pause": StatusPaused, "resume": StatusActive}[in.Action]
		if _, err := s.UpdateRoutine(ctx, r.ID, RoutineChange{Status: &st}); err != nil {
			return tools.Result{}, err
		}
		return tools.Result{Summary: fmt.Sprintf("The routine “%s” is %s.", r.Title, st)}, nil
	case "delete":
		if err := s.DeleteRoutine(ctx, r.ID); err != nil {
			return tools.Result{}, err
		}
		return tools.Result{Summary: fmt.Sprintf("Deleted the routine “%s”.", r.Title)}, nil
	default: // run_now
		run, err := s.RunRoutine(ctx, r.ID)
		if err != nil {
			return tools.Result{}, err
		}
		return tools.Result{Summary: fmt.Sprintf("The routine “%s” runs now (%s); its result comes in a later message.", r.Title, run.Status)}, nil
	}
}
