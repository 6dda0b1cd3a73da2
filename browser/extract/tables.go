package extract

import (
	"strconv"
	"strings"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// Bounds of what a page's tables give: a page of a thousand rows is read by its start.
const (
	maxTables   = 20
	maxRows     = 200
	maxColspan  = 20
	maxCellRune = 500
)

// findTables is the page's data tables, at most maxTables of maxRows rows each, and their nodes.
// Layout tables (role=presentation, a table holding tables, one cell a row) are not data.
func findTables(root *html.Node) ([]Table, []*html.Node) {
	var tables []Table
	var nodes []*html.Node
	for _, n := range elements(root, "table") {
		if len(tables) == maxTables {
			break
		}
		if r := strings.ToLower(attr(n, "role")); r == "presentation" || r == "none" {
			continue
		}
		if len(elements(n, "table")) > 1 {
			continue
		}
		t, ok := readTable(n)
		if !ok {
			continue
		}
		tables = append(tables, t)
		nodes = append(nodes, n)
	}
	return tables, nodes
}

// readTable reads one table: its caption, its header (a <thead>'s row, or a first row of <th>
// only) and its rows. A cell spanning columns is its text and then empty cells, so every row
// keeps its columns under the header.
func readTable(n *html.Node) (Table, bool) {
	var t Table
	if c := elements(n, "caption"); len(c) > 0 {
		t.Caption = textOf(c[0])
	}
	wide := false
	for i, tr := range rowsOf(n) {
		cells, allTH := cellsOf(tr)
		if len(cells) == 0 {
			continue
		}
		if len(cells) > 1 {
			wide = true
		}
		inHead := tr.Parent != nil && tr.Parent.DataAtom == atom.Thead
		if t.Header == nil && len(t.Rows) == 0 && (inHead || (i == 0 && allTH)) {
			t.Header = cells
			continue
		}
		if len(t.Rows) == maxRows {
			break
		}
		t.Rows = append(t.Rows, cells)
	}
	if !wide || (len(t.Rows) == 0) {
		return Table{}, false
	}
	return t, true
}

// rowsOf is the <tr> of table n, not those of a table inside it.
func rowsOf(n *html.Node) []*html.Node {
	var out []*html.Node
	var walk func(*html.Node)
	walk = func(c *html.Node) {
		for ; c != nil; c = c.NextSibling {
			if c.Type != html.ElementNode {
				continue
			}
			switch c.DataAtom {
			case atom.Tr:
				out = append(out, c)
			case atom.Thead, atom.Tbody, atom.Tfoot:
				walk(c.FirstChild)
			}
		}
	}
	walk(n.FirstChild)
	return out
}

// cellsOf is a row's cells, trimmed, and whether each is a <th>.
func cellsOf(tr *html.Node) (cells []string, allTH bool) {
	allTH = true
	for c := tr.FirstChild; c != nil; c = c.NextSibling {
		if c.Type != html.ElementNode || (c.DataAtom != atom.Td && c.DataAtom != atom.Th) {
			continue
		}
		if c.DataAtom == atom.Td {
			allTH = false
		}
		cells = append(cells, clipRunes(textOf(c), maxCellRune))
		span, _ := strconv.Atoi(strings.TrimSpace(attr(c, "colspan")))
		for i := 1; i < min(span, maxColspan); i++ {
			cells = append(cells, "")
		}
	}
	return cells, allTH && len(cells) > 0
}

// clipRunes keeps the first n characters of s.
func clipRunes(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return strings.TrimSpace(string(r[:n-1])) + "…"
}
