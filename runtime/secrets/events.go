package secrets

import "github.com/ensemblework/ensemble/runtime/events"

// The kinds of secret event: subject the secret's name. They never carry a value.
const (
	KindSaved   events.Kind = "secret.saved"   // data: [Saved]
	KindRemoved events.Kind = "secret.removed" // data: [Removed]
	KindUsed    events.Kind = "secret.use"     // data: [Used]: a secret_http call, never the value
)

// Saved is the data of a [KindSaved] event.
type Saved struct {
	Name  string   `json:"name"`
	Kind  Kind     `json:"kind"`
	Allow []string `json:"allow"`
}

// Removed is the data of a [KindRemoved] event.
type Removed struct {
	Name string `json:"name"`
}

// EventSpecs lists the secrets' kinds of event, for the catalog.
func EventSpecs() []events.Spec {
	return []events.Spec{{Kind: KindSaved, Payload: Saved{}}, {Kind: KindRemoved, Payload: Removed{}}, {Kind: KindUsed, Payload: Used{}}}
}
