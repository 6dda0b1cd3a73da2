package bridge

import (
	"errors"
	"fmt"
	"io/fs"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/ensemblework/ensemble/docs"
)

// DocsHome is where Ensemble's documentation lives.
const DocsHome = "https://github.com/ensemblework/ensemble/tree/main/docs"

// docSection is one heading of a documentation page and its text.
type docSection struct {
	Page, Title, Heading, URL, Text string
}

// DocHit is one match of ensemble_docs.
type DocHit struct {
	Title   string  `json:"title"`
	Heading string  `json:"heading"`
	URL     string  `json:"url"`
	Excerpt string  `json:"excerpt"`
	Score   float64 `json:"score"`
}

// loadDocs splits the embedded pages into sections by heading. A page that cannot be read, is not
// UTF-8 text, or does not open with its "# " title is not valid: the whole set is refused, so
// ensemble_docs says the documentation cannot be used rather than answering from part of it.
func loadDocs(fsys fs.FS) ([]docSection, error) {
	names, err := fs.Glob(fsys, "*.md")
	if err != nil || len(names) == 0 {
		return nil, errors.New("docs: no documentation pages")
	}
	var out []docSection
	for _, n := range names {
		b, err := fs.ReadFile(fsys, n)
		if err != nil {
			return nil, fmt.Errorf("docs: read %s: %w", n, err)
		}
		if !utf8.Valid(b) {
			return nil, fmt.Errorf("docs: %s is not UTF-8 text", n)
		}
		if first, _, _ := strings.Cut(strings.TrimLeft(string(b), "\n"), "\n"); !strings.HasPrefix(first, "# ") || strings.TrimSpace(first[2:]) == "" {
			return nil, fmt.Errorf("docs: %s does not open with its title (# …)", n)
		}
		title := strings.TrimSuffix(n, ".md")
		cur := docSection{Page: n, Title: title, Heading: title, URL: DocsHome + "/" + n}
		flush := func() {
			if strings.TrimSpace(cur.Text) != "" {
				out = append(out, cur)
			}
		}
		for _, line := range strings.Split(string(b), "\n") {
			if h, ok := strings.CutPrefix(line, "# "); ok {
				title = strings.TrimSpace(h)
				cur.Title, cur.Heading = title, title
				continue
			}
			if h, ok := strings.CutPrefix(line, "## "); ok {
				flush()
				cur = docSection{Page: n, Title: title, Heading: strings.TrimSpace(h), URL: DocsHome + "/" + n + "#" + anchor(h)}
				continue
			}
			cur.Text += line + "\n"
		}
		flush()
	}
	return out, nil
}

func anchor(h string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(h)) {
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
		case r == ' ' || r == '-':
			b.WriteRune('-')
		}
	}
	return b.String()
}

func docWords(s string) []string {
	return strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '_' })
}

// searchDocs ranks sections by the query's words: in the heading counts three times.
func searchDocs(secs []docSection, query string, limit int) []DocHit {
	ws := docWords(query)
	var hits []DocHit
	for _, s := range secs {
		head, body := strings.ToLower(s.Title+" "+s.Heading), strings.ToLower(s.Text)
		score := 0.0
		for _, w := range ws {
			if len(w) < 2 {
				continue
			}
			score += 3*float64(strings.Count(head, w)) + float64(min(strings.Count(body, w), 5))
		}
		if score == 0 {
			continue
		}
		ex := strings.Join(strings.Fields(s.Text), " ")
		if i := strings.Index(strings.ToLower(ex), firstWord(ws)); i > 80 {
			ex = "…" + ex[i-60:]
		}
		if len(ex) > 300 {
			ex = ex[:300] + "…"
		}
		hits = append(hits, DocHit{Title: s.Title, Heading: s.Heading, URL: s.URL, Excerpt: ex, Score: score})
	}
	sort.SliceStable(hits, func(i, j int) bool { return hits[i].Score > hits[j].Score })
	if len(hits) > limit {
		hits = hits[:limit]
	}
	return hits
}

func firstWord(ws []string) string {
	for _, w := range ws {
		if len(w) >= 2 {
			return w
		}
	}
	return "\x00"
}

var docsFS fs.FS = docs.Files
