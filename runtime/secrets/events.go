package secrets

import "github.com/ensemblework/ensemble/runtime/events"

// The kinds of secret event: subject the secret's name. They never carry a value.
const (
	KindSaved   events.Kind = "secret.saved"   // data: [Saved]
	KindRemoved events.Kind = "secret.removed" // data: [Removed]
	KindUsed    events.Kind = "secret.use"     // data: [Used]: a secret_http call or a git sign-in, never the value
	KindRuns    events.Kind = "secret.runs"    // data: [RunSettings]: which secrets runs that name none get
)

// Saved is the data of a [KindSaved] event.
type Saved struct {
	Name  string   `json:"name"`
	Kind  Kind     `json:"kind"`
	Allow []string `json:"allow"`
	Env   bool     `json:"env"` // runs that may have it get it as $NAME
	Git   bool     `json:"git"` // git signs in with it to its allowed origins
}

// Removed is the data of a [KindRemoved] event.
type Removed struct {
	Name string `json:"name"`
}

// EventSpecs lists the secrets' kinds of event, for the catalog.
func EventSpecs() []events.Spec {
	return []events.Spec{{Kind: KindSaved, Payload: Saved{}}, {Kind: KindRemoved, Payload: Removed{}}, {Kind: KindUsed, Payload: Used{}}, {Kind: KindRuns, Payload: RunSettings{}}}
}
