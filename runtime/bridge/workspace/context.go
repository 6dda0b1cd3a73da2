package workspace

import (
	"context"
	"fmt"
	"net/http"
	"strings"

	"github.com/ensemblework/ensemble/runtime/records"
)

// ContextInput names one record and, optionally, one relation to list in full.
type ContextInput struct {
	Item   string `json:"item"`
	Kind   string `json:"kind,omitempty"`
	Rel    string `json:"rel,omitempty"`
	Offset int    `json:"offset,omitempty"`
	Limit  int    `json:"limit,omitempty"`
	Format string `json:"format,omitempty"` // "packet": Markdown
}

// MaxContextPacket is the most characters of a context packet.
const MaxContextPacket = 8000

// hostedKinds are kinds the hosted Ensemble keeps that this runtime does not.
var hostedKinds = map[string]string{
	"deliverable": "deliverables", "meeting": "meetings", "meeting_note": "meeting notes", "event": "calendar events",
	"diagram": "diagrams", "plot": "plots", "artifact": "saved app items",
	"approval": "approvals", "decision": "Needs-me decisions",
}

func kindOf(item, kind string) (string, string, error) {
	k, id, ok := refOf(item, kind)
	if !ok {
		if kind == "" {
			return "", "", badRequest("Name the record with a handle (ensemble://task/tsk_…), a link, or an id with its kind.")
		}
		k, id = kind, strings.TrimSpace(item)
	}
	if k == "document" {
		k = "file"
	}
	if what, ok := hostedKinds[k]; ok {
		return "", "", refuse(http.StatusNotFound, "This Ensemble keeps no %s yet, so there is no %s %q to read.", what, k, id)
	}
	if !oneOfKinds(k) {
		return "", "", badRequest("%q is not a kind Ensemble keeps; use task, project, person, repo, page or file.", k)
	}
	return k, id, nil
}

func oneOfKinds(k string) bool {
	for _, x := range records.SearchKinds {
		if x == k {
			return true
		}
	}
	return false
}

// Context returns one record and what it links to: six of each relation, every card with its
// handle; or one relation in full, paged; or the Markdown packet.
func (s *Service) Context(ctx context.Context, in ContextInput) (map[string]any, error) {
	kind, id, err := kindOf(in.Item, in.Kind)
	if err != nil {
		return nil, err
	}
	title, err := s.rec.Title(ctx, kind, id)
	if err != nil {
		return nil, refuse(http.StatusNotFound, "There is no %s %s (it may be in Trash).", kind, records.Handle(kind, id))
	}
	links, err := s.rec.Links(ctx, kind, id)
	if err != nil {
		return nil, err
	}
	rels := map[string][]Card{}
	var order []string
	for _, l := range links {
		if _, ok := rels[l.Rel]; !ok {
			order = append(order, l.Rel)
		}
		rels[l.Rel] = append(rels[l.Rel], card(l.Kind, l.ID, l.Title, ""))
	}
	rec := card(kind, id, title, "")
	if in.Rel != "" {
		all, ok := rels[in.Rel]
		if !ok {
			return nil, refuse(http.StatusNotFound, "%s has no %q relation; it has %s.", rec.Ref, in.Rel, strings.Join(nonNil(order), ", "))
		}
		limit := clampLimit(in.Limit, 20, 50)
		return map[string]any{"record": rec, "rel": in.Rel, "items": page(all, in.Offset, limit), "total": len(all), "offset": in.Offset, "limit": limit}, nil
	}
	if in.Format == "packet" {
		var b strings.Builder
		fmt.Fprintf(&b, "# %s\n%s\n\n", title, rec.Ref)
		for _, r := range order {
			b.WriteString("## " + r + "\n")
			for _, c := range rels[r] {
				fmt.Fprintf(&b, "- %s (%s)\n", c.Title, c.Ref)
			}
			b.WriteString("\n")
		}
		out, _ := excerpt(b.String(), 0, MaxContextPacket, rec.Ref)
		return map[string]any{"record": rec, "packet": out, "notice": NotInstructions}, nil
	}
	type relation struct {
		Rel   string `json:"rel"`
		Total int    `json:"total"`
		Items []Card `json:"items"`
		More  string `json:"more,omitempty"`
	}
	var out []relation
	for _, r := range order {
		rl := relation{Rel: r, Total: len(rels[r]), Items: page(rels[r], 0, 6)}
		if rl.Total > 6 {
			rl.More = fmt.Sprintf("ensemble_context item=%s rel=%q lists all %d.", rec.Ref, r, rl.Total)
		}
		out = append(out, rl)
	}
	return map[string]any{"record": rec, "relations": nonNil(out)}, nil
}

// ReadInput names one item to read in full.
type ReadInput struct {
	Kind   string `json:"kind,omitempty"`
	ID     string `json:"id"`
	Offset int    `json:"offset,omitempty"`
	Limit  int    `json:"limit,omitempty"`
}

// MaxBody is the most characters of a page body one read returns.
const MaxBody = 15000

// Read returns one item in full; its long text (a page, notes) comes in parts of at most MaxBody
// characters from offset.
func (s *Service) Read(ctx context.Context, in ReadInput) (map[string]any, error) {
	if name, ok := strings.CutPrefix(strings.TrimSpace(in.ID), "ensemble://skill/"); ok || in.Kind == "skill" {
		return s.Skills(ctx, ListInput{ID: firstOf(name, in.ID)})
	}
	kind, id, err := kindOf(in.ID, in.Kind)
	if err != nil {
		return nil, err
	}
	ref := records.Handle(kind, id)
	limit := clampLimit(in.Limit, MaxBody, MaxBody)
	body := func(text string) *Untrusted {
		u := &Untrusted{Trust: "untrusted", Source: ref}
		u.Text, u.More = excerpt(text, max(in.Offset, 0), limit, ref)
		return u
	}
	notFound := refuse(http.StatusNotFound, "There is no %s %s (it may be in Trash).", kind, ref)
	out := map[string]any{"kind": kind, "ref": ref, "notice": NotInstructions}
	switch kind {
	case "task":
		t, err := s.rec.Tasks().Get(ctx, id)
		if err != nil || t.DeletedAt != nil {
			return nil, notFound
		}
		out["body"] = body(t.Page)
		t.Page = ""
		out["item"] = t
	case "page":
		p, err := s.rec.Pages().Get(ctx, id)
		if err != nil || p.DeletedAt != nil {
			return nil, notFound
		}
		out["body"] = body(p.Body)
		p.Body = ""
		out["item"] = p
	case "project":
		p, err := s.rec.Projects().Get(ctx, id)
		if err != nil || p.DeletedAt != nil {
			return nil, notFound
		}
		out["body"] = body(p.Notes)
		p.Notes = ""
		out["item"] = p
	case "person":
		p, err := s.rec.People().Get(ctx, id)
		if err != nil || p.DeletedAt != nil {
			return nil, notFound
		}
		out["body"] = body(p.Notes)
		p.Notes = ""
		out["item"] = p
	case "repo":
		r, err := s.rec.Repos().Get(ctx, id)
		if err != nil || r.DeletedAt != nil {
			return nil, notFound
		}
		out["item"] = r
	case "file":
		f, err := s.files.Get(ctx, id)
		if err != nil {
			return nil, notFound
		}
		out["item"] = fileDetails(f)
		out["note"] = "Ensemble's text of the file and the file itself come from ensemble_get_file."
	}
	links, err := s.rec.Links(ctx, kind, id)
	if err == nil {
		cards := make([]Card, 0, len(links))
		for _, l := range links {
			c := card(l.Kind, l.ID, l.Title, l.Rel)
			cards = append(cards, c)
		}
		out["links"] = cards
	}
	return out, nil
}
