// Package extract reads a page's HTML as a person reads it: its main content as Markdown (tables
// as tables), its tables as rows, and the products and prices on it. The browser broker runs it
// on a page's live DOM; hub_read_web_page on a page fetched without a browser.
package extract

import (
	"bytes"
	"fmt"
	"net/url"
	"regexp"
	"strings"

	readability "codeberg.org/readeck/go-readability/v2"
	"github.com/JohannesKaufmann/html-to-markdown/v2/converter"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/base"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/commonmark"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/table"
	"golang.org/x/net/html"
)

// Result is what a page holds.
type Result struct {
	Title    string    `json:"title,omitempty"`
	Markdown string    `json:"markdown"`
	Tables   []Table   `json:"tables,omitempty"`
	Products []Product `json:"products,omitempty"`
}

// Table is one table of a page.
type Table struct {
	Caption string     `json:"caption,omitempty"`
	Header  []string   `json:"header,omitempty"`
	Rows    [][]string `json:"rows"`
}

// Product is one product and its price, from the page's structured data or what it shows.
type Product struct {
	Name         string `json:"name"`
	Price        string `json:"price,omitempty"`  // as shown: "$19.99"
	Amount       string `json:"amount,omitempty"` // 19.99
	Currency     string `json:"currency,omitempty"`
	URL          string `json:"url,omitempty"`
	Availability string `json:"availability,omitempty"`
	Source       string `json:"source"` // json-ld, microdata, page
}

// Page reads an HTML document found at u.
func Page(doc []byte, u *url.URL) (Result, error) {
	root, err := html.Parse(bytes.NewReader(doc))
	if err != nil {
		return Result{}, fmt.Errorf("extract: parse the page: %w", err)
	}
	tables, tableNodes := findTables(root)
	title, md, err := markdown(root, u, tableNodes)
	if err != nil {
		return Result{}, err
	}
	return Result{Title: title, Markdown: md, Tables: tables, Products: products(root, u)}, nil
}

// Text reads a plain-text document.
func Text(doc []byte) Result { return Result{Markdown: tidy(string(doc))} }

// newConverter turns HTML into Markdown with tables as GFM tables. A converter holds no state
// between calls, but one per page keeps the package free of shared values.
func newConverter() *converter.Converter {
	return converter.NewConverter(converter.WithPlugins(
		base.NewBasePlugin(),
		commonmark.NewCommonmarkPlugin(),
		// A table without <th> still gets its first row as the header GFM needs.
		table.NewTablePlugin(table.WithHeaderPromotion(true), table.WithSkipEmptyRows(true)),
	))
}

// markdown is the page's title and its main content: the HTML through readability (the article
// without navigation, asides and scripts) and then html-to-markdown. Readability judges a page
// whose content is mostly a table (prices, a timetable) as having little text and may leave the
// table out; each data table the article lost is added after it, so a table is never dropped.
func markdown(root *html.Node, u *url.URL, tableNodes []*html.Node) (title, md string, err error) {
	domain := u.Scheme + "://" + u.Host
	conv := newConverter()
	p := readability.NewParser()
	art, rerr := p.ParseDocument(root, u)
	if rerr == nil {
		title = strings.TrimSpace(art.Title())
	}
	if rerr == nil && art.Node != nil {
		out, err := conv.ConvertNode(art.Node, converter.WithDomain(domain))
		if err == nil && strings.TrimSpace(string(out)) != "" {
			md := tidy(string(out))
			kept := map[string]bool{}
			for _, t := range elements(art.Node, "table") {
				kept[squash(textOf(t))] = true
			}
			for _, t := range tableNodes {
				if kept[squash(textOf(t))] {
					continue
				}
				if tm, err := conv.ConvertNode(t, converter.WithDomain(domain)); err == nil && strings.TrimSpace(string(tm)) != "" {
					md += "\n\n" + tidy(string(tm))
				}
			}
			return title, md, nil
		}
	}
	// Readability found no article (a short page, a list of links): convert the whole page.
	out, err := conv.ConvertNode(root, converter.WithDomain(domain))
	if err != nil {
		return "", "", fmt.Errorf("extract: convert the page: %w", err)
	}
	return title, tidy(string(out)), nil
}

var blankLines = regexp.MustCompile(`\n[ \t]*\n(?:[ \t]*\n)+`)

// tidy drops runs of blank lines, which cost characters and say nothing.
func tidy(s string) string {
	s = strings.ReplaceAll(s, "\r\n", "\n")
	return strings.TrimSpace(blankLines.ReplaceAllString(s, "\n\n"))
}

// squash is s without any white space, to compare texts that markup spaced differently.
func squash(s string) string {
	return strings.Join(strings.Fields(s), "")
}
