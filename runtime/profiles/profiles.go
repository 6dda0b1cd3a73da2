// Package profiles keeps run profiles: an agent, a folder and run settings saved under a name, so
// a task is assigned the same way again in one step.
//
// A profile fills what an assignment leaves out ([Profile.Fill]): the agent, the folder and each
// setting, each only where the assignment names none, so what the person names wins. The default
// profile ([Pick]) is the starred one, else the first saved, else none: the built-in Quick
// settings, which are the run defaults ([jobs.DefaultSettings]).
//
// # Events
//
// Every save, star and delete appends [KindChanged] in its transaction, with the profile's id, so
// clients read the list again.
package profiles

import (
	"github.com/ensemblework/ensemble/runtime/events"
	"reflect"
	"strings"
	"time"

	"github.com/ensemblework/ensemble/runtime/jobs"
	"github.com/ensemblework/ensemble/runtime/problem"
)

// KindChanged is the event of a profile saved, starred or deleted; its data is a [Change].
const KindChanged events.Kind = "profile.changed"

// EventSpecs lists the profiles' kinds of event, for the catalog.
func EventSpecs() []events.Spec { return events.Specs(Change{}, KindChanged) }

// Change is the data of a [KindChanged] event.
type Change struct {
	ID string `json:"id"`
}

// MaxName is the longest a profile's name may be, in characters.
const MaxName = 60

// Profile is one saved run profile.
type Profile struct {
	ID        string             `json:"id"`
	Name      string             `json:"name"`
	Agent     string             `json:"agent"`
	Folder    string             `json:"folder,omitempty"` // absolute; "" leaves the folder to the assignment
	Settings  jobs.SettingsInput `json:"settings"`
	Starred   bool               `json:"starred"`
	CreatedAt time.Time          `json:"createdAt"`
	UpdatedAt time.Time          `json:"updatedAt"`
}

// Fill returns req with what it leaves out taken from p: the agent, the folder (unless req names
// a folder or a repository URL) and each setting req does not set.
func (p Profile) Fill(req jobs.AssignRequest) jobs.AssignRequest {
	if strings.TrimSpace(req.Agent) == "" {
		req.Agent = p.Agent
	}
	if req.Folder == "" && req.RepoURL == "" {
		req.Folder = p.Folder
	}
	req.Settings = Over(req.Settings, p.Settings)
	return req
}

// Over is the settings in with each field it leaves out (nil) taken from base.
func Over(in, base jobs.SettingsInput) jobs.SettingsInput {
	// Every field of SettingsInput is a pointer, nil when left out; reflection keeps this right
	// as fields are added.
	out := in
	ov, bv := reflect.ValueOf(&out).Elem(), reflect.ValueOf(base)
	for i := range ov.NumField() {
		if f := ov.Field(i); f.Kind() == reflect.Pointer && f.IsNil() {
			f.Set(bv.Field(i))
		}
	}
	return out
}

// Pick is the default of the profiles: the starred one, else the first saved (by when it was
// saved), else none (false): Quick settings.
func Pick(ps []Profile) (Profile, bool) {
	var first *Profile
	for i := range ps {
		p := &ps[i]
		if p.Starred {
			return *p, true
		}
		if first == nil || p.CreatedAt.Before(first.CreatedAt) || p.CreatedAt.Equal(first.CreatedAt) && p.ID < first.ID {
			first = p
		}
	}
	if first == nil {
		return Profile{}, false
	}
	return *first, true
}

// Lookup finds the profile ref names among ps: by id, else by name whatever its case.
func Lookup(ps []Profile, ref string) (Profile, error) {
	ref = strings.TrimSpace(ref)
	for _, p := range ps {
		if p.ID == ref {
			return p, nil
		}
	}
	for _, p := range ps {
		if strings.EqualFold(p.Name, ref) {
			return p, nil
		}
	}
	return Profile{}, notFound(ref)
}

// notFound says no profile has that id or name.
func notFound(ref string) error { return problem.NotFound("There is no run profile %q.", ref) }
