package keys

import "github.com/ensemblework/ensemble/runtime/events"

// The kinds of bridge key event: subject the key's id, data the [Key] (which holds no secret).
const (
	KindCreated events.Kind = "key.created"
	KindRevoked events.Kind = "key.revoked"
)

// EventSpecs lists the bridge keys' kinds of event, for the catalog.
func EventSpecs() []events.Spec { return events.Specs(Key{}, KindCreated, KindRevoked) }
