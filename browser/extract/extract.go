// Package extract reads a page's HTML as a person reads it: its main content as Markdown (tables
// as tables), its tables as rows, and the products and prices on it. The browser broker runs it
// on a page's live DOM; hub_read_web_page on a page fetched without a browser.
package extract

import (
	"bytes"
	"net/url"
	"regexp"
	"strings"

	readability "codeberg.org/readeck/go-readability/v2"
	htmltomarkdown "github.com/JohannesKaufmann/html-to-markdown/v2"
	"github.com/JohannesKaufmann/html-to-markdown/v2/converter"
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
	title, md, err := markdown(doc, u)
	if err != nil {
		return Result{}, err
	}
	return Result{Title: title, Markdown: md}, nil
}

// Text reads a plain-text document.
func Text(doc []byte) Result { return Result{Markdown: tidy(string(doc))} }

// markdown is the page's title and its main content: HTML through readability (the article
// without navigation, asides and scripts) and then html-to-markdown.
func markdown(doc []byte, u *url.URL) (title, md string, err error) {
	domain := u.Scheme + "://" + u.Host
	art, rerr := readability.FromReader(bytes.NewReader(doc), u)
	if rerr == nil && art.Node != nil {
		out, err := htmltomarkdown.ConvertNode(art.Node, converter.WithDomain(domain))
		if err == nil && strings.TrimSpace(string(out)) != "" {
			return strings.TrimSpace(art.Title()), tidy(string(out)), nil
		}
	}
	// Readability found no article (a short page, a list of links): convert the whole page.
	out, err := htmltomarkdown.ConvertString(string(doc), converter.WithDomain(domain))
	if err != nil {
		return "", "", err
	}
	if rerr == nil {
		title = strings.TrimSpace(art.Title())
	}
	return title, tidy(out), nil
}

var blankLines = regexp.MustCompile(`\n[ \t]*\n(?:[ \t]*\n)+`)

// tidy drops runs of blank lines, which cost characters and say nothing.
func tidy(s string) string {
	s = strings.ReplaceAll(s, "\r\n", "\n")
	return strings.TrimSpace(blankLines.ReplaceAllString(s, "\n\n"))
}
