package records

import (
	"time"

	"github.com/ensemblework/ensemble/runtime/ledger"
	"github.com/ensemblework/ensemble/runtime/problem"
	"github.com/ensemblework/ensemble/runtime/store"
)

// Person is someone the person works with.
type Person struct {
	ID           string     `json:"id"`
	SpaceID      string     `json:"spaceId"`
	Name         string     `json:"name"`
	Email        string     `json:"email"`
	Role         string     `json:"role"`
	Team         string     `json:"team"`
	Relationship string     `json:"relationship"`
	Notes        string     `json:"notes"`
	CreatedAt    time.Time  `json:"createdAt"`
	UpdatedAt    time.Time  `json:"updatedAt"`
	DeletedAt    *time.Time `json:"deletedAt"`
}

// PersonInput is a new person or a change to one.
type PersonInput struct {
	Name         Opt[string] `json:"name,omitzero"`
	Email        Opt[string] `json:"email,omitzero"`
	Role         Opt[string] `json:"role,omitzero"`
	Team         Opt[string] `json:"team,omitzero"`
	Relationship Opt[string] `json:"relationship,omitzero"`
	Notes        Opt[string] `json:"notes,omitzero"`
}

var personKind = &kind[Person, PersonInput]{
	name: "person", changes: personChanges, table: "people", prefix: "per_", order: "name COLLATE NOCASE",
	decode: func(r ledger.Row) Person {
		return Person{ID: r.Str("id"), SpaceID: r.Str("space_id"), Name: r.Str("name"),
			Email: r.Str("email"), Role: r.Str("role"), Team: r.Str("team"),
			Relationship: r.Str("relationship"), Notes: r.Str("notes"),
			CreatedAt: store.ReadTime(r.Str("created_at")), UpdatedAt: store.ReadTime(r.Str("updated_at")),
			DeletedAt: parseNullStamp(r, "deleted_at")}
	},
	title: func(p Person) string { return p.Name },
	row: func(b *Batch, in PersonInput, cur *Person) (ledger.Row, error) {
		if cur == nil && !in.Name.Set {
			return nil, problem.Invalid("A person needs a name.")
		}
		return fieldRow(
			textField{"name", "name", in.Name, 200, true},
			textField{"email", "email", in.Email, 320, false},
			textField{"role", "role", in.Role, 200, false},
			textField{"team", "team", in.Team, 200, false},
			textField{"relationship", "relationship", in.Relationship, 200, false},
			textField{"notes", "notes", in.Notes, 500_000, false},
		)
	},
}

// dropFromPeople removes a person from the people list of every task that names them.
func dropFromPeople(b *Batch, id string) error {
	rows, err := b.t.QueryContext(b.t.Context(),
		"SELECT id, people FROM tasks WHERE EXISTS (SELECT 1 FROM json_each(tasks.people) WHERE value = ?)", id)
	if err != nil {
		return err
	}
	type hit struct{ id, people string }
	var hits []hit
	for rows.Next() {
		var h hit
		if err := rows.Scan(&h.id, &h.people); err != nil {
			rows.Close()
			return err
		}
		hits = append(hits, h)
	}
	rows.Close()
	for _, h := range hits {
		var keep []string
		for _, p := range stringList(h.people) {
			if p != id {
				keep = append(keep, p)
			}
		}
		if _, err := b.t.Update("tasks", h.id, ledger.Row{"people": listJSON(keep)}); err != nil {
			return err
		}
		if err := taskKind.announce(b.t, h.id); err != nil {
			return err
		}
	}
	return nil
}
