package extract

import (
	"encoding/json"
	"fmt"
	"net/url"
	"strconv"
	"strings"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// maxProducts bounds what one page gives: a category page of hundreds is read by its start.
const maxProducts = 50

// products is what the page sells: from its JSON-LD (schema.org Product, Offer, AggregateOffer,
// within @graph and ItemList too), else its microdata, else the prices it shows beside a name.
// Structured data is what the shop means; the visible fallback is a reading of the page.
func products(root *html.Node, u *url.URL) []Product {
	out := jsonLDProducts(root, u)
	if len(out) == 0 {
		out = microdataProducts(root, u)
	}
	if len(out) == 0 {
		out = visibleProducts(root, u)
	}
	if len(out) > maxProducts {
		out = out[:maxProducts]
	}
	return out
}

// jsonLDProducts reads every <script type="application/ld+json">.
func jsonLDProducts(root *html.Node, u *url.URL) []Product {
	var out []Product
	for _, s := range elements(root, "script") {
		if !strings.EqualFold(strings.TrimSpace(strings.Split(attr(s, "type"), ";")[0]), "application/ld+json") || s.FirstChild == nil {
			continue
		}
		var v any
		if err := json.Unmarshal([]byte(s.FirstChild.Data), &v); err != nil {
			continue // a page's broken script is not ours to report
		}
		ldWalk(v, u, &out)
	}
	return dedupe(out)
}

// ldWalk finds Product objects anywhere in a JSON-LD value: at the top, in @graph, in an
// ItemList's itemListElement (a ListItem's item), or in an array of them.
func ldWalk(v any, u *url.URL, out *[]Product) {
	switch v := v.(type) {
	case []any:
		for _, e := range v {
			ldWalk(e, u, out)
		}
	case map[string]any:
		if ldIs(v, "Product", "ProductGroup", "IndividualProduct", "ProductModel") {
			*out = append(*out, ldProducts(v, u)...)
			return
		}
		for k, e := range v {
			if k == "@context" {
				continue
			}
			ldWalk(e, u, out)
		}
	}
}

// ldIs says whether a JSON-LD object's @type is one of types ("Product", ["Product", "Thing"],
// "schema:Product", "http://schema.org/Product").
func ldIs(o map[string]any, types ...string) bool {
	var ts []string
	switch t := o["@type"].(type) {
	case string:
		ts = []string{t}
	case []any:
		for _, e := range t {
			if s, ok := e.(string); ok {
				ts = append(ts, s)
			}
		}
	}
	for _, t := range ts {
		if i := strings.LastIndexAny(t, "/:"); i >= 0 {
			t = t[i+1:]
		}
		for _, want := range types {
			if t == want {
				return true
			}
		}
	}
	return false
}

// ldProducts is one Product's offers, each a Product with its price (a product with no offer is
// still named).
func ldProducts(o map[string]any, u *url.URL) []Product {
	base := Product{Name: ldText(o["name"]), URL: absURL(u, ldText(o["url"])), Source: "json-ld"}
	if base.Name == "" {
		return nil
	}
	var offers []map[string]any
	switch of := o["offers"].(type) {
	case map[string]any:
		offers = append(offers, of)
	case []any:
		for _, e := range of {
			if m, ok := e.(map[string]any); ok {
				offers = append(offers, m)
			}
		}
	}
	if len(offers) == 0 {
		return []Product{base}
	}
	var out []Product
	for _, of := range offers {
		p := base
		p.Currency = strings.ToUpper(ldText(of["priceCurrency"]))
		spec, _ := of["priceSpecification"].(map[string]any)
		if p.Currency == "" && spec != nil {
			p.Currency = strings.ToUpper(ldText(spec["priceCurrency"]))
		}
		if ldIs(of, "AggregateOffer") {
			low, high := ldAmount(of["lowPrice"]), ldAmount(of["highPrice"])
			p.Amount = low
			p.Price = showPrice(low, p.Currency)
			if high != "" && high != low {
				if low == "" {
					p.Amount = high
				}
				p.Price = strings.TrimPrefix(p.Price+"–"+showPrice(high, p.Currency), "–")
			}
		} else {
			p.Amount = ldAmount(of["price"])
			if p.Amount == "" && spec != nil {
				p.Amount = ldAmount(spec["price"])
			}
			p.Price = showPrice(p.Amount, p.Currency)
		}
		if s := ldText(of["url"]); s != "" {
			p.URL = absURL(u, s)
		}
		p.Availability = schemaTerm(ldText(of["availability"]))
		out = append(out, p)
	}
	return out
}

// ldText is a JSON-LD value as text: a string, a number, or the first of a list.
func ldText(v any) string {
	switch v := v.(type) {
	case string:
		return strings.TrimSpace(html.UnescapeString(v))
	case float64:
		return strconv.FormatFloat(v, 'f', -1, 64)
	case []any:
		if len(v) > 0 {
			return ldText(v[0])
		}
	case map[string]any:
		if s := ldText(v["@id"]); s != "" {
			return s
		}
		return ldText(v["name"])
	}
	return ""
}

// ldAmount is a price's amount, "19.99": a number, or a string as a shop writes it ("19,99").
func ldAmount(v any) string {
	switch v := v.(type) {
	case float64:
		return strconv.FormatFloat(v, 'f', -1, 64)
	case string:
		v = strings.TrimSpace(v)
		if v == "" {
			return ""
		}
		if _, a, _, ok := ParsePrice("$" + strings.TrimLeft(v, "$€£¥ ")); ok {
			return a
		}
	}
	return ""
}

// schemaTerm is "InStock" for "https://schema.org/InStock".
func schemaTerm(s string) string {
	if i := strings.LastIndexAny(s, "/:"); i >= 0 {
		return s[i+1:]
	}
	return s
}

// microdataProducts reads itemscope itemtype=…/Product elements: itemprop name, price,
// priceCurrency, url and availability, in the product or its offers.
func microdataProducts(root *html.Node, u *url.URL) []Product {
	var out []Product
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.ElementNode && hasAttr(n, "itemscope") && strings.HasSuffix(strings.TrimRight(strings.Fields(attr(n, "itemtype") + " x")[0], "/"), "/Product") {
			if p := microdataProduct(n, u); p.Name != "" {
				out = append(out, p)
			}
			return
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(root)
	return dedupe(out)
}

func microdataProduct(n *html.Node, u *url.URL) Product {
	p := Product{Source: "microdata"}
	var shown string
	var walk func(*html.Node, bool)
	walk = func(c *html.Node, inOffer bool) {
		for ; c != nil; c = c.NextSibling {
			if c.Type != html.ElementNode {
				continue
			}
			props := strings.Fields(attr(c, "itemprop"))
			has := func(name string) bool {
				for _, p := range props {
					if p == name {
						return true
					}
				}
				return false
			}
			if hasAttr(c, "itemscope") {
				// An offer's fields are the product's price; a brand's or a review's name is not
				// the product's.
				if has("offers") {
					walk(c.FirstChild, true)
				}
				if has("url") && p.URL == "" {
					p.URL = absURL(u, itemValue(c))
				}
				continue
			}
			switch {
			case has("name") && !inOffer && p.Name == "":
				p.Name = itemValue(c)
			case has("price") || has("lowPrice"):
				if p.Amount == "" {
					v := itemValue(c)
					if s, a, cur, ok := ParsePrice(v); ok {
						p.Amount, shown = a, s
						if p.Currency == "" {
							p.Currency = cur
						}
					} else if a := ldAmount(v); a != "" {
						p.Amount = a
					}
					if t := textOf(c); t != "" && attr(c, "content") != "" {
						if s, _, _, ok := ParsePrice(t); ok {
							shown = s
						}
					}
				}
			case has("priceCurrency"):
				p.Currency = strings.ToUpper(itemValue(c))
			case has("availability"):
				p.Availability = schemaTerm(itemValue(c))
			case has("url") && p.URL == "":
				p.URL = absURL(u, itemValue(c))
			}
			walk(c.FirstChild, inOffer)
		}
	}
	walk(n.FirstChild, false)
	if shown != "" {
		p.Price = shown
	} else {
		p.Price = showPrice(p.Amount, p.Currency)
	}
	return p
}

// itemValue is a microdata property's value: content, href or src where the element has one,
// else its text.
func itemValue(n *html.Node) string {
	for _, k := range []string{"content", "href", "src", "value"} {
		if v := attr(n, k); v != "" {
			return strings.TrimSpace(v)
		}
	}
	return textOf(n)
}

// visibleProducts reads what a page without structured data shows: an element whose class, id or
// itemprop says price and whose text is a price, named by the nearest heading, title or name
// element around it (at most four levels up).
func visibleProducts(root *html.Node, u *url.URL) []Product {
	var out []Product
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.ElementNode {
			if invisible[n.DataAtom] {
				return
			}
			if saysPrice(n) {
				if shown, amount, cur, ok := ParsePrice(textOf(n)); ok {
					if name, href := nameNear(n); name != "" {
						out = append(out, Product{Name: name, Price: shown, Amount: amount, Currency: cur, URL: absURL(u, href), Source: "page"})
					}
					return // a price's own parts (its cents, its sign) are not prices of their own
				}
			}
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(root)
	return dedupe(out)
}

// saysPrice says whether n is marked as a price, and not a crossed-out one.
func saysPrice(n *html.Node) bool {
	marks := strings.ToLower(attr(n, "class") + " " + attr(n, "id") + " " + attr(n, "itemprop"))
	if !strings.Contains(marks, "price") {
		return false
	}
	for _, old := range []string{"old", "was", "strike", "original", "regular", "list-price", "compare"} {
		if strings.Contains(marks, old) {
			return false
		}
	}
	return n.DataAtom != atom.Del && n.DataAtom != atom.S
}

// nameNear is the product name nearest a price: a heading, or an element marked title or name,
// in the price's ancestors' other children; and the link it is in or holds.
func nameNear(price *html.Node) (name, href string) {
	for up, n := 0, price.Parent; up < 4 && n != nil && n.DataAtom != atom.Body; up, n = up+1, n.Parent {
		var found *html.Node
		var walk func(*html.Node)
		walk = func(c *html.Node) {
			for ; c != nil && found == nil; c = c.NextSibling {
				if c == price || c.Type != html.ElementNode || invisible[c.DataAtom] {
					continue
				}
				if namesProduct(c) && textOf(c) != "" {
					found = c
					return
				}
				walk(c.FirstChild)
			}
		}
		walk(n.FirstChild)
		if found != nil {
			return clipRunes(textOf(found), 200), linkOf(found)
		}
	}
	return "", ""
}

// namesProduct says whether n reads as a product's name: a heading, or marked as a (product's)
// title or name.
func namesProduct(n *html.Node) bool {
	switch n.DataAtom {
	case atom.H1, atom.H2, atom.H3, atom.H4:
		return true
	}
	for _, m := range strings.Fields(strings.ToLower(attr(n, "class") + " " + attr(n, "id") + " " + attr(n, "itemprop"))) {
		m = strings.NewReplacer("-", "", "_", "").Replace(m)
		switch {
		case m == "title", m == "name", strings.Contains(m, "producttitle"), strings.Contains(m, "productname"), strings.HasSuffix(m, "itemname"), strings.HasSuffix(m, "itemtitle"):
			return true
		}
	}
	return false
}

// linkOf is the address of the link n is, holds, or is in.
func linkOf(n *html.Node) string {
	for p := n; p != nil; p = p.Parent {
		if p.DataAtom == atom.A {
			return attr(p, "href")
		}
	}
	if a := elements(n, "a"); len(a) > 0 {
		return attr(a[0], "href")
	}
	return ""
}

// absURL resolves ref against the page's address; "" stays "".
func absURL(u *url.URL, ref string) string {
	if ref == "" || u == nil {
		return ref
	}
	r, err := u.Parse(ref)
	if err != nil {
		return ref
	}
	return r.String()
}

// dedupe drops repeats (a product in JSON-LD twice, a price shown twice).
func dedupe(ps []Product) []Product {
	seen := map[string]bool{}
	out := ps[:0]
	for _, p := range ps {
		k := fmt.Sprint(p.Name, "\x00", p.Amount, "\x00", p.Currency, "\x00", p.URL)
		if seen[k] {
			continue
		}
		seen[k] = true
		out = append(out, p)
	}
	return out
}
