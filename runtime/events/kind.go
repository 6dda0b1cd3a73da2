package events

import (
	"fmt"
	"reflect"
	"strings"
)

// Kind names what an event says happened, such as "run.started": the SSE event name a client
// listens for. The part before the dot is the family ("run"), which a stream can be filtered by.
//
// Each package that emits events declares its kinds as Kind constants beside the payload type they
// carry, and lists them in a [Spec] slice; the UI's list of kinds is generated from those lists, so
// no kind is spelled twice.
type Kind string

// Family is the part of the kind before its first dot: "run" for "run.started".
func (k Kind) Family() string {
	f, _, _ := strings.Cut(string(k), ".")
	return f
}

// Spec pairs a kind with the payload its events carry, for the catalog the UI's list is generated
// from.
type Spec struct {
	Kind    Kind
	Payload any    // a zero value of the data's type
	Doc     string // one line on what the event says
}

// Specs lists kinds that share one payload type and have no line of their own.
func Specs(payload any, kinds ...Kind) []Spec {
	out := make([]Spec, len(kinds))
	for i, k := range kinds {
		out[i] = Spec{Kind: k, Payload: payload}
	}
	return out
}

// PayloadName is the Go type of the spec's payload as a person reads it ("jobs.Trace").
func (s Spec) PayloadName() string {
	if s.Payload == nil {
		return ""
	}
	return reflect.TypeOf(s.Payload).String()
}

// Check reports a catalog whose kinds are malformed or declared twice.
func Check(specs []Spec) error {
	seen := map[Kind]bool{}
	for _, s := range specs {
		if f := s.Kind.Family(); f == "" || f == string(s.Kind) && s.Kind != KindReset {
			return fmt.Errorf("events: kind %q has no family (want family.name)", s.Kind)
		}
		if seen[s.Kind] {
			return fmt.Errorf("events: kind %q is declared twice", s.Kind)
		}
		seen[s.Kind] = true
	}
	return nil
}

// KindReset, the one kind without a family, is the event a stream itself sends first to a client that resumes from a seq above the newest:
// the client reads its lists again. Its data is [Reset].
const KindReset Kind = "reset"

// Reset is the data of a [KindReset] event.
type Reset struct {
	Newest int64 `json:"newest"`
}
