package tools

import (
	"context"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/ensemblework/ensemble/runtime/records"
)

// This file holds the page tools: list, read, create, update (replace title or body) and edit
// (exact find-and-replace in the body).

type pageRow struct {
	ID       string  `json:"id"`
	Title    string  `json:"title"`
	ParentID *string `json:"parentId,omitempty"`
	Chars    int     `json:"chars"`
}

func pageRowOf(p records.Page) pageRow {
	return pageRow{ID: p.ID, Title: p.Title, ParentID: p.ParentID, Chars: utf8.RuneCountInString(p.Body)}
}

func pageRef(p records.Page) Ref { return Ref{Kind: "page", ID: p.ID, Title: p.Title} }

// pageKind is pages to the shared list tool.
var pageKind = recordKind[records.Page, records.PageInput]{
	kind: "page", noun: "page", listName: "hub_list_pages",
	area:    "pages",
	coll:    (*records.Service).Pages,
	id:      func(p records.Page) string { return p.ID },
	title:   func(p records.Page) string { return p.Title },
	deleted: func(p records.Page) bool { return p.DeletedAt != nil },
	row:     func(p records.Page) any { return pageRowOf(p) },
}

// listPagesIn is hub_list_pages' input.
type listPagesIn struct {
	Query    string `json:"query,omitempty" jsonschema:"words the title contains"`
	ParentID string `json:"parentId,omitempty" jsonschema:"only the pages directly inside this one"`
	Offset   int    `json:"offset,omitempty" check:"minimum=0"`
}

func (in listPagesIn) words() string { return in.Query }
func (in listPagesIn) from() int     { return in.Offset }

func listPagesTool() Tool {
	return listTool(pageKind, "List the person's pages (not in Trash) by title, with their parent page and length. Filter by words in the title or by parent. Long lists come in parts: call again with the offset the note names.",
		func(p records.Page, in listPagesIn) bool {
			parent := bareID(in.ParentID, "page")
			return parent == "" || (p.ParentID != nil && *p.ParentID == parent)
		})
}

// titleHas reports whether title contains query, ignoring case; an empty query matches all.
func titleHas(title, query string) bool {
	q := strings.ToLower(strings.TrimSpace(query))
	return q == "" || strings.Contains(strings.ToLower(title), q)
}

// readPageIn is hub_read_page's input.
type readPageIn struct {
	ID     string `json:"id" check:"minLength=1" jsonschema:"the page's id or ensemble:// link"`
	Offset *int   `json:"offset,omitempty" check:"minimum=0" jsonschema:"read from this character on"`
}

func readPageTool() Tool {
	return typedTool(Tool{
		Name:        "hub_read_page",
		Description: "Read one page's Markdown. A long page comes as its start and end with the middle cut; pass offset to read a part in full.",
		Area:        "pages",
		Risk:        RiskLow,
	}, Typed[readPageIn]{
		Run: func(ctx context.Context, tc *ToolContext, in readPageIn) (Result, error) {
			p, err := tc.Records.Pages().Get(ctx, bareID(in.ID, "page"))
			if err != nil {
				return Result{}, missing(err, "page", "hub_list_pages")
			}
			body, note := textPart(p.Body, in.Offset, "hub_read_page")
			summary := fmt.Sprintf("Read page %s.", quoted(p.Title))
			if note != "" {
				summary = fmt.Sprintf("Read part of page %s.", quoted(p.Title))
			}
			if p.DeletedAt != nil {
				summary = strings.TrimSuffix(summary, ".") + ", which is in Trash."
			}
			data := map[string]any{"id": p.ID, "title": p.Title, "parentId": p.ParentID, "body": body}
			if note != "" {
				data["note"] = note
			}
			return Result{Summary: summary, Data: data, Refs: []Ref{pageRef(p)}}, nil
		},
	})
}

// createPageIn is hub_create_page's input.
type createPageIn struct {
	Title    string  `json:"title" check:"minLength=1,maxLength=300"`
	Body     *string `json:"body,omitempty" jsonschema:"Markdown"`
	ParentID string  `json:"parentId,omitempty" jsonschema:"the page to put it inside"`
}

func createPageTool() Tool {
	return typedTool(Tool{
		Name:        "hub_create_page",
		Description: "Create a page with a title and a Markdown body, optionally inside another page. Link people and records in the body as [@Name](ensemble://person/<id>).",
		Area:        "pages",
		Risk:        RiskLow,
		Undoable:    Undoable,
	}, Typed[createPageIn]{
		Preview: func(ctx context.Context, tc *ToolContext, asked createPageIn) (string, error) {
			in, parent, err := readNewPage(ctx, tc, asked)
			if err != nil {
				return "", err
			}
			if parent != "" {
				return fmt.Sprintf("Add page %s inside %s.", quoted(strings.TrimSpace(in.Title.V)), quoted(parent)), nil
			}
			return fmt.Sprintf("Add page %s.", quoted(strings.TrimSpace(in.Title.V))), nil
		},
		Write: func(ctx context.Context, tc *ToolContext, b *records.Batch, asked createPageIn) (Result, error) {
			in, _, err := readNewPage(ctx, tc, asked)
			if err != nil {
				return Result{}, err
			}
			p, err := tc.Records.Pages().CreateIn(b, in)
			if err != nil {
				return Result{}, err
			}
			return Result{Summary: fmt.Sprintf("Added page %s.", quoted(p.Title)),
				Data: map[string]any{"page": pageRowOf(p)}, Refs: []Ref{pageRef(p)}}, nil
		},
	})
}

// readNewPage turns hub_create_page's input into records' and finds the parent's title, if it
// names one.
func readNewPage(ctx context.Context, tc *ToolContext, in createPageIn) (records.PageInput, string, error) {
	if strings.TrimSpace(in.Title) == "" { // as records would refuse it, so the preview does too
		return records.PageInput{}, "", fmt.Errorf("The title cannot be empty.")
	}
	pi := records.PageInput{Title: records.Some(in.Title)}
	if in.Body != nil {
		pi.Body = records.Some(*in.Body)
	}
	if in.ParentID == "" {
		return pi, "", nil
	}
	id := bareID(in.ParentID, "page")
	parent, err := tc.Records.Title(ctx, "page", id)
	if err != nil {
		return pi, "", fmt.Errorf("The parent page does not exist (or it is in Trash); call hub_list_pages to find it.")
	}
	pi.ParentID = records.Some(&id)
	return pi, parent, nil
}

// updatePageIn is hub_update_page's input: only the fields given change.
type updatePageIn struct {
	ID    string  `json:"id" check:"minLength=1" jsonschema:"the page's id, ensemble:// link or exact title"`
	Title *string `json:"title,omitempty" check:"minLength=1,maxLength=300"`
	Body  *string `json:"body,omitempty" jsonschema:"the new Markdown body, replacing the old"`
}

func updatePageTool() Tool {
	return typedTool(Tool{
		Name:        "hub_update_page",
		Description: "Rename a page or replace its whole Markdown body. To change part of the body, use hub_edit_page instead.",
		Area:        "pages",
		Risk:        RiskMedium,
		Undoable:    Undoable,
		Prepare:     pageKind.prepareID,
	}, Typed[updatePageIn]{
		Preview: func(ctx context.Context, tc *ToolContext, in updatePageIn) (string, error) {
			u, err := readPageUpdate(ctx, tc, in)
			if err != nil {
				return "", err
			}
			return fmt.Sprintf("Update page %s: %s.", quoted(u.cur.Title), strings.Join(u.plans, " and ")), nil
		},
		Write: func(ctx context.Context, tc *ToolContext, b *records.Batch, in updatePageIn) (Result, error) {
			u, err := readPageUpdate(ctx, tc, in)
			if err != nil {
				return Result{}, err
			}
			p, err := tc.Records.Pages().UpdateIn(b, u.cur.ID, u.in)
			if err != nil {
				return Result{}, missing(err, "page", "hub_list_pages")
			}
			return Result{Summary: fmt.Sprintf("Updated page %s: %s.", quoted(u.cur.Title), strings.Join(u.done, " and ")),
				Data: map[string]any{"page": pageRowOf(p)}, Refs: []Ref{pageRef(p)}}, nil
		},
	})
}

// pageUpdate is a checked hub_update_page or hub_edit_page call: the page as it is, the change,
// and the change in words, as a plan and as done.
type pageUpdate struct {
	cur         records.Page
	in          records.PageInput
	plans, done []string
}

func readPageUpdate(ctx context.Context, tc *ToolContext, in updatePageIn) (pageUpdate, error) {
	cur, err := livePage(ctx, tc, in.ID)
	if err != nil {
		return pageUpdate{}, err
	}
	u := pageUpdate{cur: cur}
	if in.Title != nil {
		u.in.Title = records.Some(*in.Title)
		u.plans = append(u.plans, "rename it to "+quoted(strings.TrimSpace(*in.Title)))
		u.done = append(u.done, "renamed it to "+quoted(strings.TrimSpace(*in.Title)))
	}
	if in.Body != nil {
		u.in.Body = records.Some(*in.Body)
		n := Plural(utf8.RuneCountInString(strings.TrimSpace(*in.Body)), "character")
		u.plans = append(u.plans, "replace its body ("+n+")")
		u.done = append(u.done, "replaced its body ("+n+")")
	}
	if len(u.plans) == 0 {
		return pageUpdate{}, fmt.Errorf("Nothing to change: give a title or a body.")
	}
	return u, nil
}

// livePage reads a page that is not in Trash, the only kind a write may change.
func livePage(ctx context.Context, tc *ToolContext, id string) (records.Page, error) {
	p, err := tc.Records.Pages().Get(ctx, bareID(id, "page"))
	if err == nil && p.DeletedAt != nil {
		return p, fmt.Errorf("Page %s is in Trash; restore it first to change it.", quoted(p.Title))
	}
	return p, missing(err, "page", "hub_list_pages")
}

// editPageIn is hub_edit_page's input.
type editPageIn struct {
	ID    string     `json:"id" check:"minLength=1" jsonschema:"the page's id, ensemble:// link or exact title"`
	Edits []pageEdit `json:"edits" check:"minItems=1,maxItems=50"`
}

// pageEdit is one find-and-replace of hub_edit_page.
type pageEdit struct {
	Old string `json:"old" check:"minLength=1" jsonschema:"the exact text to replace"`
	New string `json:"new" jsonschema:"what replaces it; empty to delete it"`
}

func editPageTool() Tool {
	return typedTool(Tool{
		Name: "hub_edit_page",
		Description: "Change parts of a page's Markdown body by exact find and replace, in order: each old text must occur exactly once in the body as the earlier edits left it (include enough around it to make it unique). " +
			"All the edits land together or none do. To replace the whole body, use hub_update_page.",
		Area:     "pages",
		Risk:     RiskMedium,
		Undoable: Undoable,
		Prepare:  pageKind.prepareID,
	}, Typed[editPageIn]{
		Preview: func(ctx context.Context, tc *ToolContext, in editPageIn) (string, error) {
			u, err := readPageEdit(ctx, tc, in)
			if err != nil {
				return "", err
			}
			return fmt.Sprintf("Edit page %s: %s.", quoted(u.cur.Title), u.plans[0]), nil
		},
		Write: func(ctx context.Context, tc *ToolContext, b *records.Batch, in editPageIn) (Result, error) {
			u, err := readPageEdit(ctx, tc, in)
			if err != nil {
				return Result{}, err
			}
			p, err := tc.Records.Pages().UpdateIn(b, u.cur.ID, u.in)
			if err != nil {
				return Result{}, missing(err, "page", "hub_list_pages")
			}
			return Result{Summary: fmt.Sprintf("Edited page %s: %s.", quoted(u.cur.Title), u.done[0]),
				Data: map[string]any{"page": pageRowOf(p)}, Refs: []Ref{pageRef(p)}}, nil
		},
	})
}

func readPageEdit(ctx context.Context, tc *ToolContext, in editPageIn) (pageUpdate, error) {
	cur, err := livePage(ctx, tc, in.ID)
	if err != nil {
		return pageUpdate{}, err
	}
	body, err := applyEdits(cur.Body, in.Edits)
	if err != nil {
		return pageUpdate{}, fmt.Errorf("Page %s was not changed: %w", quoted(cur.Title), err)
	}
	n := Plural(len(in.Edits), "change")
	return pageUpdate{cur: cur, in: records.PageInput{Body: records.Some(body)},
		plans: []string{"make " + n}, done: []string{"made " + n}}, nil
}

// applyEdits makes each edit in turn on body. An old text that is not there, or is there more than
// once, stops them all: a replace that guessed which occurrence was meant could change the wrong
// paragraph of the person's page.
func applyEdits(body string, edits []pageEdit) (string, error) {
	for i, e := range edits {
		which := fmt.Sprintf("edit %d of %d", i+1, len(edits))
		if e.Old == "" {
			return "", fmt.Errorf("%s has no old text to find.", which)
		}
		switch n := strings.Count(body, e.Old); n {
		case 1:
			body = strings.Replace(body, e.Old, e.New, 1)
		case 0:
			return "", fmt.Errorf("%s: the old text %s is not in the page (after the edits before it); read the page and copy the text exactly.", which, quoted(clip(e.Old, 80)))
		default:
			return "", fmt.Errorf("%s: the old text %s occurs %d times; include more of the text around it so it occurs once.", which, quoted(clip(e.Old, 80)), n)
		}
	}
	return body, nil
}

// clip shortens s to n characters for an error message.
func clip(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}
