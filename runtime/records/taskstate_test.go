package records

import (
	"errors"
	"slices"
	"testing"
)

// TestCheckMoveEveryPair walks every (from, to) pair of statuses, so a change to the state machine
// shows up here as a list of exactly which moves changed.
func TestCheckMoveEveryPair(t *testing.T) {
	allowed := map[[2]Status]bool{}
	for _, m := range [][2]Status{
		{Proposed, Todo}, {Proposed, InProgress}, {Proposed, Dropped},
		{Todo, InProgress}, {Todo, Blocked}, {Todo, Done}, {Todo, Dropped},
		{InProgress, Todo}, {InProgress, WaitingApproval}, {InProgress, Blocked}, {InProgress, Done}, {InProgress, Dropped},
		{WaitingApproval, InProgress}, {WaitingApproval, Blocked}, {WaitingApproval, Done}, {WaitingApproval, Dropped},
		{Blocked, Todo}, {Blocked, InProgress}, {Blocked, Dropped},
		{Done, Todo}, {Done, InProgress},
		{Dropped, Proposed}, {Dropped, Todo},
	} {
		allowed[m] = true
	}
	for _, from := range Statuses {
		for _, to := range Statuses {
			err := CheckMove(from, to)
			want := from == to || allowed[[2]Status{from, to}]
			if (err == nil) != want {
				t.Errorf("CheckMove(%s, %s) = %v, want allowed=%v", from, to, err, want)
			}
			var me *MoveError
			if err != nil && (!errors.As(err, &me) || !slices.Equal(me.Allowed, moves[from])) {
				t.Errorf("CheckMove(%s, %s): error %v does not list the allowed moves %v", from, to, err, moves[from])
			}
		}
	}
}

func TestMoveErrorSentence(t *testing.T) {
	err := CheckMove(Done, Blocked)
	want := "A task that is Done cannot move to Blocked; it can move to To do or In progress."
	if err == nil || err.Error() != want {
		t.Fatalf("got %q, want %q", err, want)
	}
}

func TestEveryStatusHasMoves(t *testing.T) {
	for _, s := range Statuses {
		// Every status has a way out and a label a person reads (not its wire name).
		if !s.Valid() || len(moves[s]) == 0 || s.Label() == string(s) {
			t.Errorf("status %s: valid=%v moves=%v label=%q", s, s.Valid(), moves[s], s.Label())
		}
	}
	if Status("started").Valid() {
		t.Error(`Status("started").Valid() = true`)
	}
}
