package records

import (
	"context"
	"database/sql"
	"fmt"
	"math"
	"regexp"
	"sort"
	"strings"
	"unicode"

	"github.com/ensemblework/ensemble/runtime/events"
	"github.com/ensemblework/ensemble/runtime/problem"
)

// A handle names one record as ensemble://<kind>/<id>; editors and agents pass handles back to ask
// about a record again.
const handlePrefix = "ensemble://"

// Handle returns the handle of a record.
func Handle(kind, id string) string { return handlePrefix + kind + "/" + id }

// SearchKinds are the kinds of record search covers, as handles name them.
var SearchKinds = []string{"task", "project", "person", "repo", "page", "file"}

// ParseHandle splits ensemble://<kind>/<id>. It accepts the kinds of [SearchKinds] and "items/<kind>/<id>".
func ParseHandle(s string) (kind, id string, ok bool) {
	rest, ok := strings.CutPrefix(strings.TrimSpace(s), handlePrefix)
	if !ok {
		return "", "", false
	}
	rest = strings.TrimPrefix(rest, "items/")
	kind, id, ok = strings.Cut(rest, "/")
	if !ok || id == "" || strings.Contains(id, "/") || !oneOf(kind, SearchKinds) {
		return "", "", false
	}
	return kind, id, true
}

// SearchQuery is a ranked word search.
type SearchQuery struct {
	Text  string
	Kinds []string // empty: every kind
	Near  string   // a handle: what links to it ranks first
	Limit int      // at most this many hits; 1 to 40
}

// SearchHit is one record a search found.
type SearchHit struct {
	Kind    string  `json:"kind"`
	ID      string  `json:"id"`
	Ref     string  `json:"ref"`
	Title   string  `json:"title"`
	Snippet string  `json:"snippet,omitempty"`
	Score   float64 `json:"score"`
	Why     string  `json:"why"`
}

// MaxSearchHits caps one search's answer.
const MaxSearchHits = 40

// words splits text into the words search matches: letters and digits, lower case, without repeats.
func words(text string) []string {
	f := strings.FieldsFunc(strings.ToLower(text), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsNumber(r) })
	return dedupe(f)
}

// Search ranks the records that match any word of q.Text: SQLite FTS5's BM25 with a record's title
// weighing three times its text, plus a bonus for what links to q.Near. It is word matching, not
// meaning: no embeddings.
func (s *Service) Search(ctx context.Context, q SearchQuery) ([]SearchHit, error) {
	ws := words(q.Text)
	if len(ws) == 0 {
		return nil, problem.Invalid("Search needs at least one word.")
	}
	if len(ws) > 32 {
		ws = ws[:32]
	}
	for _, k := range q.Kinds {
		if !oneOf(k, SearchKinds) {
			return nil, problem.Invalid("%q is not a kind search knows; use %s.", k, strings.Join(SearchKinds, ", "))
		}
	}
	limit := q.Limit
	if limit <= 0 || limit > MaxSearchHits {
		limit = MaxSearchHits
	}
	terms := make([]string, len(ws))
	for i, w := range ws {
		terms[i] = `"` + w + `"*`
	}
	// Rank inside FTS5 first (bm25 with the title weighing three times the text) and only then join,
	// filter by kind and make snippets, for the few rows kept: sorting every match with its snippet
	// costs more than the whole budget on a large index.
	take := limit * 3
	if len(q.Kinds) > 0 {
		take = limit * 30
	}
	top, err := s.rankMatches(ctx, terms, take)
	if err != nil {
		return nil, fmt.Errorf("records: search: %w", err)
	}
	hits, err := s.searchHits(ctx, top, q.Kinds, ws)
	if err != nil {
		return nil, fmt.Errorf("records: search: %w", err)
	}
	if nk, nid, ok := ParseHandle(q.Near); ok {
		links, err := s.Links(ctx, nk, nid)
		if err != nil && !IsNotFound(err) {
			return nil, err
		}
		linked := map[string]string{}
		for _, l := range links {
			linked[l.Ref] = l.Rel
		}
		for i := range hits {
			if rel, ok := linked[hits[i].Ref]; ok {
				hits[i].Score += 10
				hits[i].Why += "; linked to " + q.Near + " (" + rel + ")"
			}
		}
	}
	sort.SliceStable(hits, func(i, j int) bool { return hits[i].Score > hits[j].Score })
	if len(hits) > limit {
		hits = hits[:limit]
	}
	for i := range hits {
		hits[i].Score = float64(int(hits[i].Score*1000)) / 1000
	}
	return hits, nil
}

// A ranked is one FTS5 row and its score (-bm25: higher is better).
type ranked struct {
	n     int64
	score float64
}

// rankSQL keeps the best ?2 rows matching ?1, best first and, among equal scores, in row order.
const rankSQL = `SELECT rowid, -bm25(search_fts, 3.0, 1.0) FROM search_fts
	WHERE search_fts MATCH ?1 ORDER BY bm25(search_fts, 3.0, 1.0), rowid LIMIT ?2`

// bm25K1 is FTS5's bm25 k1.
const bm25K1 = 1.2

// rankMatches returns the best take rows matching any of terms (FTS5 phrases), best first and,
// among equal scores, in row order.
//
// bm25 costs a lookup of each matching row's length, so scoring every row that holds any common
// word costs more than the whole budget on a large index. With more than one word it first ranks
// only the rows holding every word (MaxScore, as search engines prune): bm25 gives phrase i at
// most idf(i)·(k1+1) however often it occurs, so a row missing a word scores strictly less than
// the sum of the other words' bounds. When the take-th best row holding every word beats that for
// every word left out, no other row can reach the best take (nor tie with them), and they are
// the same rows, scores and order as ranking every match. Otherwise it ranks every match.
func (s *Service) rankMatches(ctx context.Context, terms []string, take int) ([]ranked, error) {
	if len(terms) > 1 {
		top, err := rankQuery(ctx, s.db, strings.Join(terms, " AND "), take)
		if err != nil {
			return nil, err
		}
		if len(top) == take {
			ok, err := s.othersBelow(ctx, terms, top[take-1].score)
			if err != nil {
				return nil, err
			}
			if ok {
				return top, nil
			}
		}
	}
	return rankQuery(ctx, s.db, strings.Join(terms, " OR "), take)
}

// othersBelow reports whether every row missing one of terms scores below floor. bm25's idf of a
// phrase is ln((N − hits + 0.5) / (hits + 0.5)) (at least 1e-6) over the N rows of the index; N is
// bounded above by the span of search_docs' numbers (each indexed row has one), which only makes
// the bound larger and costs two index lookups where counting would read every row.
func (s *Service) othersBelow(ctx context.Context, terms []string, floor float64) (bool, error) {
	var q strings.Builder
	q.WriteString("SELECT coalesce((SELECT max(n) FROM search_docs) - (SELECT min(n) FROM search_docs) + 1, 0)")
	args := make([]any, len(terms))
	for i, t := range terms {
		q.WriteString(", (SELECT count(*) FROM search_fts WHERE search_fts MATCH ?)")
		args[i] = t
	}
	counts := make([]int64, len(terms)+1)
	dest := make([]any, len(counts))
	for i := range counts {
		dest[i] = &counts[i]
	}
	if err := s.db.QueryRowContext(ctx, q.String(), args...).Scan(dest...); err != nil {
		return false, err
	}
	n := float64(counts[0])
	sum, least := 0.0, math.Inf(1)
	for _, hits := range counts[1:] {
		if hits > counts[0] {
			return false, nil
		}
		idf := math.Log((n - float64(hits) + 0.5) / (float64(hits) + 0.5))
		if idf <= 1e-6 {
			idf = 1e-6
		}
		sum += idf
		least = min(least, idf)
	}
	bound := (sum - least) * (bm25K1 + 1)
	return floor > bound*(1+1e-9), nil
}

func rankQuery(ctx context.Context, db events.Querier, match string, take int) ([]ranked, error) {
	rows, err := db.QueryContext(ctx, rankSQL, match, take)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []ranked
	for rows.Next() {
		var r ranked
		if err := rows.Scan(&r.n, &r.score); err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// searchHits makes hits of ranked rows, keeping the kinds asked for (all when none), each with its
// record, title, snippet and why. The rows are ordered by score as a single ranking query orders
// them (rows with equal scores as SQLite's sorter leaves them), then their titles and text are read
// in one query.
func (s *Service) searchHits(ctx context.Context, top []ranked, kinds, ws []string) ([]SearchHit, error) {
	if len(top) == 0 {
		return nil, nil
	}
	args := make([]any, 0, 2*len(top)+len(kinds))
	for _, r := range top {
		args = append(args, r.n, r.score)
	}
	kindFilter, ties := "", "top.n"
	if len(kinds) > 0 {
		kindFilter = " AND d.kind IN (" + strings.TrimSuffix(strings.Repeat("?, ", len(kinds)), ", ") + ")"
		ties = "d.kind, d.ref_id"
		for _, k := range kinds {
			args = append(args, k)
		}
	}
	// CROSS JOIN keeps SQLite from reading every record of a kind through search_docs' (kind,
	// ref_id) index; equal scores keep the order that plan gave them.
	rows, err := s.db.QueryContext(ctx, `
		WITH top(n, score) AS (VALUES `+strings.TrimSuffix(strings.Repeat("(?, ?), ", len(top)), ", ")+`)
		SELECT d.kind, d.ref_id, top.score, d.n FROM top CROSS JOIN search_docs d ON d.n = top.n WHERE 1`+kindFilter+`
		ORDER BY top.score DESC, `+ties, args...)
	if err != nil {
		return nil, err
	}
	var hits []SearchHit
	var ns []any
	for rows.Next() {
		var h SearchHit
		var n int64
		if err := rows.Scan(&h.Kind, &h.ID, &h.Score, &n); err != nil {
			rows.Close()
			return nil, err
		}
		h.Ref = Handle(h.Kind, h.ID)
		hits = append(hits, h)
		ns = append(ns, n)
	}
	rows.Close()
	if err := rows.Err(); err != nil || len(hits) == 0 {
		return nil, err
	}
	rows, err = s.db.QueryContext(ctx, `SELECT rowid, title, body FROM search_fts WHERE rowid IN (`+
		strings.TrimSuffix(strings.Repeat("?, ", len(ns)), ", ")+`)`, ns...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	type text struct{ title, body string }
	byN := make(map[int64]text, len(ns))
	for rows.Next() {
		var n int64
		var t text
		if err := rows.Scan(&n, &t.title, &t.body); err != nil {
			return nil, err
		}
		byN[n] = t
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	for i := range hits {
		t, ok := byN[ns[i].(int64)]
		if !ok {
			return nil, sql.ErrNoRows
		}
		hits[i].Title = t.title
		hits[i].Why = why(ws, t.title)
		hits[i].Snippet = snippet(t.body, ws)
	}
	return hits, nil
}

// why says which words a hit matched, in its title or its text.
func why(ws []string, title string) string {
	tw := map[string]bool{}
	for _, w := range words(title) {
		tw[w] = true
	}
	var inTitle []string
	for _, w := range ws {
		for t := range tw {
			if strings.HasPrefix(t, w) {
				inTitle = append(inTitle, w)
				break
			}
		}
	}
	if len(inTitle) > 0 {
		return "title matches “" + strings.Join(inTitle, "”, “") + "”"
	}
	return "text matches"
}

// Link is one record another links to: its relation, handle and title.
type Link struct {
	Rel   string `json:"rel"`
	Kind  string `json:"kind"`
	ID    string `json:"id"`
	Ref   string `json:"ref"`
	Title string `json:"title"`
}

var handleInText = regexp.MustCompile(`ensemble://(task|project|person|repo|page|file)/([A-Za-z0-9_]+)`)

// linkQueries are the context graph: for each kind, the queries that find what a record links to,
// each returning kind, id and title of the other record. ?1 is the record's id, ?2 its handle.
var linkQueries = map[string][]struct{ rel, sql string }{
	"task": {
		{"project", `SELECT 'project', p.id, p.name FROM tasks t JOIN projects p ON p.id = t.project_id WHERE t.id = ?1 AND p.deleted_at IS NULL`},
		{"owner", `SELECT 'person', p.id, p.name FROM tasks t JOIN people p ON p.id = t.owner_id WHERE t.id = ?1 AND p.deleted_at IS NULL`},
		{"people", `SELECT 'person', p.id, p.name FROM tasks t, json_each(t.people) j JOIN people p ON p.id = j.value WHERE t.id = ?1 AND p.deleted_at IS NULL`},
		{"repo", `SELECT 'repo', r.id, r.name FROM tasks t JOIN repos r ON r.id = t.repo_id WHERE t.id = ?1 AND r.deleted_at IS NULL`},
		{"files", `SELECT 'file', f.id, f.name FROM files f, json_each(f.attached) j WHERE j.value = ?2 AND f.deleted_at IS NULL`},
		{"mentioned in", `SELECT 'page', id, title FROM pages WHERE instr(body, ?2) > 0 AND deleted_at IS NULL
			UNION ALL SELECT 'task', id, title FROM tasks WHERE instr(page, ?2) > 0 AND deleted_at IS NULL AND id <> ?1`},
	},
	"project": {
		{"tasks", `SELECT 'task', id, title FROM tasks WHERE project_id = ?1 AND deleted_at IS NULL ORDER BY updated_at DESC`},
		{"people", `SELECT DISTINCT 'person', p.id, p.name FROM tasks t JOIN people p ON p.id = t.owner_id OR p.id IN (SELECT value FROM json_each(t.people))
			WHERE t.project_id = ?1 AND t.deleted_at IS NULL AND p.deleted_at IS NULL`},
		{"repos", `SELECT DISTINCT 'repo', r.id, r.name FROM tasks t JOIN repos r ON r.id = t.repo_id WHERE t.project_id = ?1 AND t.deleted_at IS NULL AND r.deleted_at IS NULL`},
		{"files", `SELECT 'file', f.id, f.name FROM files f, json_each(f.attached) j WHERE j.value = ?2 AND f.deleted_at IS NULL`},
		{"mentioned in", `SELECT 'page', id, title FROM pages WHERE instr(body, ?2) > 0 AND deleted_at IS NULL`},
	},
	"person": {
		{"tasks", `SELECT 'task', id, title FROM tasks WHERE (owner_id = ?1 OR EXISTS (SELECT 1 FROM json_each(tasks.people) WHERE value = ?1)) AND deleted_at IS NULL ORDER BY updated_at DESC`},
		{"projects", `SELECT DISTINCT 'project', p.id, p.name FROM tasks t JOIN projects p ON p.id = t.project_id
			WHERE (t.owner_id = ?1 OR EXISTS (SELECT 1 FROM json_each(t.people) WHERE value = ?1)) AND t.deleted_at IS NULL AND p.deleted_at IS NULL`},
		{"files", `SELECT 'file', f.id, f.name FROM files f, json_each(f.attached) j WHERE j.value = ?2 AND f.deleted_at IS NULL`},
		{"mentioned in", `SELECT 'page', id, title FROM pages WHERE instr(body, ?2) > 0 AND deleted_at IS NULL`},
	},
	"repo": {
		{"tasks", `SELECT 'task', id, title FROM tasks WHERE repo_id = ?1 AND deleted_at IS NULL ORDER BY updated_at DESC`},
		{"projects", `SELECT DISTINCT 'project', p.id, p.name FROM tasks t JOIN projects p ON p.id = t.project_id WHERE t.repo_id = ?1 AND t.deleted_at IS NULL AND p.deleted_at IS NULL`},
		{"files", `SELECT 'file', f.id, f.name FROM files f, json_each(f.attached) j WHERE j.value = ?2 AND f.deleted_at IS NULL`},
	},
	"page": {
		{"parent", `SELECT 'page', p.id, p.title FROM pages c JOIN pages p ON p.id = c.parent_id WHERE c.id = ?1 AND p.deleted_at IS NULL`},
		{"children", `SELECT 'page', id, title FROM pages WHERE parent_id = ?1 AND deleted_at IS NULL ORDER BY title`},
		{"files", `SELECT 'file', f.id, f.name FROM files f, json_each(f.attached) j WHERE j.value = ?2 AND f.deleted_at IS NULL`},
		{"mentioned in", `SELECT 'page', id, title FROM pages WHERE instr(body, ?2) > 0 AND deleted_at IS NULL AND id <> ?1`},
	},
	"file": {},
}

// textOf is where a record's own text names other records by handle.
var textOf = map[string]string{
	"task": "SELECT page FROM tasks WHERE id = ?", "page": "SELECT body FROM pages WHERE id = ?",
	"project": "SELECT notes FROM projects WHERE id = ?", "person": "SELECT notes FROM people WHERE id = ?",
	"file": "SELECT attached FROM files WHERE id = ?",
}

var titleOf = map[string]string{
	"task": "SELECT title FROM tasks WHERE id = ? AND deleted_at IS NULL", "project": "SELECT name FROM projects WHERE id = ? AND deleted_at IS NULL",
	"person": "SELECT name FROM people WHERE id = ? AND deleted_at IS NULL", "repo": "SELECT name FROM repos WHERE id = ? AND deleted_at IS NULL",
	"page": "SELECT title FROM pages WHERE id = ? AND deleted_at IS NULL", "file": "SELECT name FROM files WHERE id = ? AND deleted_at IS NULL",
}

// Title returns the title (or name) of a record not in Trash.
func (s *Service) Title(ctx context.Context, kind, id string) (string, error) {
	q, ok := titleOf[kind]
	if !ok {
		return "", problem.Invalid("%q is not a kind of record.", kind)
	}
	var t string
	if err := s.db.QueryRowContext(ctx, q, id).Scan(&t); err != nil {
		return "", notFound(kind, id)
	}
	return t, nil
}

// Links returns what a record links to and what links to it, each once, in the order of the
// relations above: the context graph a brief, a context card and a search near a record read.
func (s *Service) Links(ctx context.Context, kind, id string) ([]Link, error) {
	if _, err := s.Title(ctx, kind, id); err != nil {
		return nil, err
	}
	ref := Handle(kind, id)
	seen := map[string]bool{ref: true}
	var out []Link
	add := func(rel, k, i, title string) {
		h := Handle(k, i)
		if seen[h] {
			return
		}
		seen[h] = true
		out = append(out, Link{Rel: rel, Kind: k, ID: i, Ref: h, Title: title})
	}
	for _, q := range linkQueries[kind] {
		rows, err := s.db.QueryContext(ctx, q.sql, id, ref)
		if err != nil {
			return nil, fmt.Errorf("records: links of %s: %w", ref, err)
		}
		for rows.Next() {
			var k, i, t string
			if err := rows.Scan(&k, &i, &t); err != nil {
				rows.Close()
				return nil, err
			}
			add(q.rel, k, i, t)
		}
		rows.Close()
	}
	if q, ok := textOf[kind]; ok {
		var body string
		s.db.QueryRowContext(ctx, q, id).Scan(&body)
		for _, m := range handleInText.FindAllStringSubmatch(body, 50) {
			if t, err := s.Title(ctx, m[1], m[2]); err == nil {
				add("mentions", m[1], m[2], t)
			}
		}
	}
	return out, nil
}

// snippet is a few words of body around the first word of ws it holds.
func snippet(body string, ws []string) string {
	lower := strings.ToLower(body)
	at := -1
	for _, w := range ws {
		if i := strings.Index(lower, w); i >= 0 && (at < 0 || i < at) {
			at = i
		}
	}
	if at < 0 {
		return ""
	}
	r := []rune(body[:at])
	start := max(0, len(r)-60)
	rest := []rune(body[at:])
	out := string(r[start:]) + string(rest[:min(len(rest), 140)])
	out = strings.Join(strings.Fields(out), " ")
	if start > 0 {
		out = "…" + out
	}
	if len(rest) > 140 {
		out += "…"
	}
	return out
}
