package assistant

import (
	"encoding/json"
	"regexp"
	"strings"

	"github.com/ensemblework/ensemble/runtime/tools"
)

// Records by title (spec 000 §4.1): ids are for tool calls and links; people read titles. A turn
// collects the records it knows (a refSet), sends them as a "refs" event before any text, and its
// final reply names a known record written as a bare id by its title, linked.

// MaxTurnRefs is the most records a turn's "refs" event carries; maxCallRefs the most one tool
// call adds from its result's data.
const (
	MaxTurnRefs = 200
	maxCallRefs = 50
)

// refSet is the records a turn knows, each once, in the order they became known.
type refSet struct {
	list []tools.Ref
	byID map[string]int
}

func newRefSet() *refSet { return &refSet{list: []tools.Ref{}, byID: map[string]int{}} }

// add keeps r unless its id is known (a later title replaces an earlier one: records get renamed)
// or the set is full.
func (s *refSet) add(rs ...tools.Ref) {
	for _, r := range rs {
		if r.ID == "" || r.Kind == "" || strings.TrimSpace(r.Title) == "" {
			continue
		}
		if i, ok := s.byID[r.ID]; ok {
			s.list[i].Title = r.Title
			continue
		}
		if len(s.list) >= MaxTurnRefs {
			continue
		}
		s.byID[r.ID] = len(s.list)
		s.list = append(s.list, r)
	}
}

func (s *refSet) get(id string) (tools.Ref, bool) {
	i, ok := s.byID[id]
	if !ok {
		return tools.Ref{}, false
	}
	return s.list[i], true
}

// kindOfID is a record's kind by its id's prefix, or "".
func kindOfID(id string) string {
	pre, _, ok := strings.Cut(id, "_")
	if !ok {
		return ""
	}
	return map[string]string{"tsk": "task", "pag": "page", "per": "person", "prj": "project", "rep": "repo", "fil": "file"}[pre]
}

// refsFromData finds the records a result's data names: objects with an id of a known kind and a
// title or name, at most maxCallRefs.
func refsFromData(data any) []tools.Ref {
	if data == nil {
		return nil
	}
	b, err := json.Marshal(data)
	if err != nil {
		return nil
	}
	var v any
	if json.Unmarshal(b, &v) != nil {
		return nil
	}
	var out []tools.Ref
	var walk func(any)
	walk = func(v any) {
		if len(out) >= maxCallRefs {
			return
		}
		switch x := v.(type) {
		case map[string]any:
			id, _ := x["id"].(string)
			title, _ := x["title"].(string)
			if title == "" {
				title, _ = x["name"].(string)
			}
			if k := kindOfID(id); k != "" && title != "" {
				out = append(out, tools.Ref{Kind: k, ID: id, Title: title})
			}
			for _, c := range x {
				walk(c)
			}
		case []any:
			for _, c := range x {
				walk(c)
			}
		}
	}
	walk(v)
	return out
}

// resultRefs is what a call's row keeps as its refs: the write's own, or for a read the records its
// data names.
func resultRefs(t *tools.Tool, res tools.Result) []tools.Ref {
	if len(res.Refs) > 0 || t.IsWrite {
		return res.Refs
	}
	return refsFromData(res.Data)
}

var (
	// titledLinkRe is a Markdown link to a record: [Title](ensemble://kind/id).
	titledLinkRe = regexp.MustCompile(`\[([^\]\n]+)\]\(ensemble://(?:items/)?([a-z]+)/([A-Za-z0-9_-]+)\)`)
	// handleRe is a record handle anywhere.
	handleRe = regexp.MustCompile(`ensemble://(?:items/)?([a-z]+)/([A-Za-z0-9_-]+)`)
	// askedIDsRe is a question that asks for ids, which then stay as written.
	askedIDsRe = regexp.MustCompile(`(?i)\b(ids?|uuids?|identifiers?)\b`)
	// protectedRe is text left alone: fenced blocks, code, Markdown links (label and target) and
	// URLs.
	protectedRe = regexp.MustCompile("(?s)```.*?```|`[^`\n]*`|\\[[^\\]\n]*\\]\\([^)\n]*\\)|[a-z][a-z0-9+.-]*://[^\\s)>\\]]+")
	// bareIDRe is a record id; a title just before it in brackets is taken with it:
	// “Draft brief” (tsk_1), "Draft brief" (tsk_1) or Draft brief (tsk_1).
	bareIDRe = regexp.MustCompile(`\b(?:tsk|pag|per|prj|rep|fil)_[A-Za-z0-9]+\b`)
)

// askedForIDs reports whether the person's message asks for ids.
func askedForIDs(message string) bool { return askedIDsRe.MatchString(message) }

// titled rewrites the bare ids of known records in a reply as [Title](ensemble://kind/id), unless
// the person asked for ids. An id in brackets right after its record's title links that title
// once; code, links and URLs are left alone, and an unknown id stays.
func titled(text string, known *refSet, message string) string {
	if askedForIDs(message) || len(known.list) == 0 {
		return text
	}
	var b strings.Builder
	last := 0
	for _, span := range protectedRe.FindAllStringIndex(text, -1) {
		b.WriteString(titleIDs(text[last:span[0]], known))
		b.WriteString(text[span[0]:span[1]])
		last = span[1]
	}
	b.WriteString(titleIDs(text[last:], known))
	return b.String()
}

// titleIDs rewrites the known ids in plain text (no code, links or URLs).
func titleIDs(s string, known *refSet) string {
	var b strings.Builder
	last := 0
	for _, m := range bareIDRe.FindAllStringIndex(s, -1) {
		r, ok := known.get(s[m[0]:m[1]])
		if !ok {
			continue
		}
		start, end := m[0], m[1]
		before := s[last:start]
		// Title (id): drop the brackets and the title before them, which the link shows.
		if strings.HasSuffix(before, "(") && end < len(s) && s[end] == ')' {
			lead := strings.TrimSuffix(before, "(")
			trimmed := strings.TrimRight(lead, " ")
			for _, form := range []string{"“" + r.Title + "”", `"` + r.Title + `"`, r.Title} {
				if strings.HasSuffix(trimmed, form) {
					before = strings.TrimSuffix(trimmed, form)
					end++
					break
				}
			}
		}
		b.WriteString(before)
		b.WriteString("[" + linkLabel(r.Title) + "](ensemble://" + r.Kind + "/" + r.ID + ")")
		last = end
	}
	b.WriteString(s[last:])
	return b.String()
}

// linkLabel is a title safe inside a Markdown link's brackets.
func linkLabel(title string) string {
	return strings.NewReplacer("[", "(", "]", ")", "\n", " ").Replace(title)
}
