package extract

import (
	"strings"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// attr is n's attribute key, or "".
func attr(n *html.Node, key string) string {
	for _, a := range n.Attr {
		if a.Key == key {
			return a.Val
		}
	}
	return ""
}

// hasAttr says whether n has the attribute key, whatever its value (itemscope).
func hasAttr(n *html.Node, key string) bool {
	for _, a := range n.Attr {
		if a.Key == key {
			return true
		}
	}
	return false
}

// elements is every element under n (n included) named tag, in document order.
func elements(n *html.Node, tag string) []*html.Node {
	var out []*html.Node
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.ElementNode && n.Data == tag {
			out = append(out, n)
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(n)
	return out
}

// invisible are elements whose text a reader never sees.
var invisible = map[atom.Atom]bool{atom.Script: true, atom.Style: true, atom.Noscript: true, atom.Template: true, atom.Head: true}

// textOf is n's visible text with its white space collapsed: block elements and <br> part words
// the way a browser shows them.
func textOf(n *html.Node) string {
	var b strings.Builder
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		switch n.Type {
		case html.TextNode:
			b.WriteString(n.Data)
			return
		case html.ElementNode:
			if invisible[n.DataAtom] {
				return
			}
			if n.DataAtom == atom.Br {
				b.WriteByte(' ')
				return
			}
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
		if n.Type == html.ElementNode && !inline[n.DataAtom] {
			b.WriteByte(' ')
		}
	}
	walk(n)
	return strings.Join(strings.Fields(b.String()), " ")
}

// inline are elements that do not part words: "<b>19</b>.99" reads "19.99".
var inline = map[atom.Atom]bool{atom.A: true, atom.B: true, atom.I: true, atom.Em: true, atom.Strong: true,
	atom.Span: true, atom.Small: true, atom.Sup: true, atom.Sub: true, atom.U: true, atom.S: true,
	atom.Abbr: true, atom.Code: true, atom.Mark: true, atom.Bdi: true, atom.Data: true, atom.Time: true}
