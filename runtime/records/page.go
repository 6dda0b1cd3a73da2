package records

import (
	"time"

	"github.com/ensemblework/ensemble/runtime/ledger"
	"github.com/ensemblework/ensemble/runtime/problem"
	"github.com/ensemblework/ensemble/runtime/store"
)

// Page is a standalone Markdown page; pages can nest under a parent.
type Page struct {
	ID        string     `json:"id"`
	SpaceID   string     `json:"spaceId"`
	ParentID  *string    `json:"parentId"`
	Title     string     `json:"title"`
	Body      string     `json:"body"`
	CreatedAt time.Time  `json:"createdAt"`
	UpdatedAt time.Time  `json:"updatedAt"`
	DeletedAt *time.Time `json:"deletedAt"`
}

// PageInput is a new page or a change to one.
type PageInput struct {
	Title    Opt[string]  `json:"title,omitzero"`
	Body     Opt[string]  `json:"body,omitzero"`
	ParentID Opt[*string] `json:"parentId,omitzero"`
}

var pageKind = &kind[Page, PageInput]{
	name: "page", changes: pageChanges, table: "pages", prefix: "pag_", order: "title COLLATE NOCASE",
	decode: func(r ledger.Row) Page {
		return Page{ID: r.Str("id"), SpaceID: r.Str("space_id"), ParentID: r.NullStr("parent_id"),
			Title: r.Str("title"), Body: r.Str("body"),
			CreatedAt: store.ReadTime(r.Str("created_at")), UpdatedAt: store.ReadTime(r.Str("updated_at")),
			DeletedAt: parseNullStamp(r, "deleted_at")}
	},
	title: func(p Page) string { return p.Title },
	row: func(b *Batch, in PageInput, cur *Page) (ledger.Row, error) {
		if cur == nil && !in.Title.Set {
			return nil, problem.Invalid("A page needs a title.")
		}
		row, err := fieldRow(
			textField{"title", "title", in.Title, 300, true},
			textField{"page", "body", in.Body, 500_000, false},
		)
		if err != nil || !in.ParentID.Set {
			return row, err
		}
		if p := in.ParentID.V; p != nil {
			if err := b.checkParent(cur, *p); err != nil {
				return nil, err
			}
		}
		row["parent_id"] = nullable(in.ParentID.V)
		return row, nil
	},
}

// checkParent refuses a parent that does not exist or that would put the page inside itself.
func (b *Batch) checkParent(cur *Page, parent string) error {
	for id, depth := parent, 0; id != ""; depth++ {
		if cur != nil && id == cur.ID {
			return problem.Invalid("A page cannot be inside itself.")
		}
		row, err := b.live("pages", "page", id)
		if err != nil {
			return problem.Invalid("There is no page with id %q.", id)
		}
		if depth > 100 {
			return problem.Invalid("Pages can nest at most 100 deep.")
		}
		id = row.Str("parent_id")
	}
	return nil
}
