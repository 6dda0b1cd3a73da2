package tools

import "github.com/ensemblework/ensemble/runtime/records"

// The people tools: list and create, over the fields records keeps of a person.

type personRow struct {
	ID           string `json:"id"`
	Name         string `json:"name"`
	Email        string `json:"email,omitempty"`
	Role         string `json:"role,omitempty"`
	Team         string `json:"team,omitempty"`
	Relationship string `json:"relationship,omitempty"`
}

var personKind = recordKind[records.Person, records.PersonInput]{
	kind: "person", noun: "person", listName: "hub_list_people",
	area:    "people",
	coll:    (*records.Service).People,
	id:      func(p records.Person) string { return p.ID },
	title:   func(p records.Person) string { return p.Name },
	deleted: func(p records.Person) bool { return p.DeletedAt != nil },
	row: func(p records.Person) any {
		return personRow{ID: p.ID, Name: p.Name, Email: p.Email, Role: p.Role, Team: p.Team, Relationship: p.Relationship}
	},
	name: func(in records.PersonInput) (string, bool) { return in.Name.V, in.Name.Set },
	changes: func(in records.PersonInput) (plans, done []string) {
		return fieldChanges(fieldChange{"name", in.Name, false}, fieldChange{"email", in.Email, false},
			fieldChange{"role", in.Role, false}, fieldChange{"team", in.Team, false},
			fieldChange{"relationship", in.Relationship, false}, fieldChange{"notes", in.Notes, true})
	},
}

func listPeopleTool() Tool {
	return listTool(personKind, "List the people the person works with (not in Trash), with email, role, team and relationship. Filter by words in the name. Long lists come in parts: call again with the offset the note names.",
		func(records.Person, listByNameIn) bool { return true })
}

// createPersonShape is hub_create_person's input as its schema says it; it decodes into
// records.PersonInput.
type createPersonShape struct {
	Name         string `json:"name" check:"minLength=1,maxLength=200"`
	Email        string `json:"email,omitempty" check:"maxLength=320"`
	Role         string `json:"role,omitempty" check:"maxLength=200"`
	Team         string `json:"team,omitempty" check:"maxLength=200"`
	Relationship string `json:"relationship,omitempty" check:"maxLength=200"`
	Notes        string `json:"notes,omitempty" jsonschema:"Markdown"`
}

func createPersonTool() Tool {
	return createTool[createPersonShape](personKind, "hub_create_person",
		"Add a person the person works with: a name, and optionally an email, role, team, their relationship to the person (\"manager\", \"client\") and Markdown notes.")
}
