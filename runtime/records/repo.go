package records

import (
	"time"

	"github.com/ensemblework/ensemble/runtime/ledger"
	"github.com/ensemblework/ensemble/runtime/problem"
	"github.com/ensemblework/ensemble/runtime/store"
)

// Repo is a code repository the person works in: a remote URL, a checkout on this computer, or both.
type Repo struct {
	ID            string     `json:"id"`
	SpaceID       string     `json:"spaceId"`
	Name          string     `json:"name"`
	URL           string     `json:"url"`
	Path          string     `json:"path"`
	DefaultBranch string     `json:"defaultBranch"`
	CreatedAt     time.Time  `json:"createdAt"`
	UpdatedAt     time.Time  `json:"updatedAt"`
	DeletedAt     *time.Time `json:"deletedAt"`
}

// RepoInput is a new repository or a change to one.
type RepoInput struct {
	Name          Opt[string] `json:"name,omitzero"`
	URL           Opt[string] `json:"url,omitzero"`
	Path          Opt[string] `json:"path,omitzero"`
	DefaultBranch Opt[string] `json:"defaultBranch,omitzero"`
}

var repoKind = &kind[Repo, RepoInput]{
	name: "repository", changes: repoChanges, table: "repos", prefix: "rep_", order: "name COLLATE NOCASE",
	decode: func(r ledger.Row) Repo {
		return Repo{ID: r.Str("id"), SpaceID: r.Str("space_id"), Name: r.Str("name"), URL: r.Str("url"),
			Path: r.Str("path"), DefaultBranch: r.Str("default_branch"),
			CreatedAt: store.ReadTime(r.Str("created_at")), UpdatedAt: store.ReadTime(r.Str("updated_at")),
			DeletedAt: parseNullStamp(r, "deleted_at")}
	},
	title: func(r Repo) string { return r.Name },
	row: func(b *Batch, in RepoInput, cur *Repo) (ledger.Row, error) {
		if cur == nil && !in.Name.Set {
			return nil, problem.Invalid("A repository needs a name.")
		}
		return fieldRow(
			textField{"name", "name", in.Name, 200, true},
			textField{"url", "url", in.URL, 2000, false},
			textField{"path", "path", in.Path, 4096, false},
			textField{"default branch", "default_branch", in.DefaultBranch, 255, false},
		)
	},
}
