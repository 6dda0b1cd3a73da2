package records

import (
	"fmt"
	"strings"

	"github.com/ensemblework/ensemble/runtime/problem"
)

// Status is where a task stands. The moves between them are the task state machine.
type Status string

const (
	Proposed        Status = "proposed"
	Todo            Status = "todo"
	InProgress      Status = "in_progress"
	WaitingApproval Status = "waiting_approval"
	Blocked         Status = "blocked"
	Done            Status = "done"
	Dropped         Status = "dropped"
)

// Statuses lists every status in board order.
var Statuses = []Status{Proposed, Todo, InProgress, WaitingApproval, Blocked, Done, Dropped}

// moves is the state machine: from each status, where a task may go. A proposed task is accepted
// (todo), started or dropped; work in progress waits for approval, is blocked, finishes or goes back
// to the list; approval either finishes the task or sends it back to work; done and dropped tasks
// can be reopened.
var moves = map[Status][]Status{
	Proposed:        {Todo, InProgress, Dropped},
	Todo:            {InProgress, Blocked, Done, Dropped},
	InProgress:      {Todo, WaitingApproval, Blocked, Done, Dropped},
	WaitingApproval: {InProgress, Blocked, Done, Dropped},
	Blocked:         {Todo, InProgress, Dropped},
	Done:            {Todo, InProgress},
	Dropped:         {Proposed, Todo},
}

// Moves returns the state machine: the statuses reachable from each status.
func Moves() map[Status][]Status {
	out := make(map[Status][]Status, len(moves))
	for k, v := range moves {
		out[k] = append([]Status(nil), v...)
	}
	return out
}

// Valid reports whether s is a known status.
func (s Status) Valid() bool {
	_, ok := moves[s]
	return ok
}

// Label is the status as a person reads it.
func (s Status) Label() string {
	switch s {
	case Proposed:
		return "Proposed"
	case Todo:
		return "To do"
	case InProgress:
		return "In progress"
	case WaitingApproval:
		return "Waiting approval"
	case Blocked:
		return "Blocked"
	case Done:
		return "Done"
	case Dropped:
		return "Dropped"
	}
	return string(s)
}

// CheckMove returns nil if a task may move from one status to another (staying put is allowed),
// else a *MoveError listing the moves that are allowed.
func CheckMove(from, to Status) error {
	if from == to {
		return nil
	}
	for _, s := range moves[from] {
		if s == to {
			return nil
		}
	}
	return &MoveError{From: from, To: to, Allowed: append([]Status(nil), moves[from]...)}
}

// MoveError is a move the state machine refuses.
type MoveError struct {
	From, To Status
	Allowed  []Status
}

// Kind makes a refused move a conflict: the task's status does not allow it now.
func (e *MoveError) Kind() problem.Kind { return problem.KindConflict }

func (e *MoveError) Error() string {
	labels := make([]string, len(e.Allowed))
	for i, s := range e.Allowed {
		labels[i] = s.Label()
	}
	return fmt.Sprintf("A task that is %s cannot move to %s; it can move to %s.",
		e.From.Label(), e.To.Label(), orList(labels))
}

// orList joins ["a", "b", "c"] as "a, b or c".
func orList(items []string) string {
	switch len(items) {
	case 0:
		return "nothing"
	case 1:
		return items[0]
	}
	return strings.Join(items[:len(items)-1], ", ") + " or " + items[len(items)-1]
}
