package needs

import "github.com/ensemblework/ensemble/runtime/events"

// The kinds of Needs me event: subject the decision's id, data the [Decision] as it now is.
const (
	KindCreated   events.Kind = "needs.created"   // a decision waits for the person
	KindAnswered  events.Kind = "needs.answered"  // it was answered
	KindWithdrawn events.Kind = "needs.withdrawn" // its run ended first
	KindExpired   events.Kind = "needs.expired"   // no one waits for the answer any more
)

// EventSpecs lists the Needs me kinds of event, for the catalog.
func EventSpecs() []events.Spec {
	return events.Specs(Decision{}, KindCreated, KindAnswered, KindWithdrawn, KindExpired)
}

// closedKind is the event that announces a decision closed with status to.
func closedKind(to Status) events.Kind {
	switch to {
	case Answered:
		return KindAnswered
	case Withdrawn:
		return KindWithdrawn
	}
	return KindExpired
}
