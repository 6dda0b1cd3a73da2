package tools

import (
	"context"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/ensemblework/ensemble/browser/extract"
	"github.com/ensemblework/ensemble/runtime/webfetch"
)

// webPageChars is the most of a page hub_read_web_page returns, its note included (spec 000 §4).
const webPageChars = 4500

// webPageIn is hub_read_web_page's input.
type webPageIn struct {
	URL string `json:"url" check:"minLength=1,maxLength=4000" jsonschema:"the page's full address, https://…"`
}

// webPageTool reads one public web page through f; HubTools passes one that reaches public
// addresses only.
func webPageTool(f *webfetch.Fetcher) Tool {
	return typedTool(Tool{
		Name: "hub_read_web_page",
		Area: "web",
		Risk: RiskLow,
		Description: "Read one public web page (http or https) as Markdown: its main content, without menus, scripts or ads, at most 4,500 characters with a note of what was left out. " +
			"It runs no page script and signs in nowhere, so a page that needs either cannot be read. Addresses on this computer or a private network are refused.",
	}, Typed[webPageIn]{
		Run: func(ctx context.Context, tc *ToolContext, in webPageIn) (Result, error) {
			page, err := f.Fetch(ctx, in.URL)
			if err != nil {
				return Result{}, err
			}
			// Read as the browser's browser_extract reads a page (readability, tables as tables).
			r := extract.Text(page.Body)
			if page.MediaType != "text/plain" {
				if r, err = extract.Page(page.Body, page.URL); err != nil {
					return Result{}, fmt.Errorf("The page could not be turned into text: %s.", Clause(err.Error()))
				}
			}
			title, md := r.Title, r.Markdown
			total := utf8.RuneCountInString(md)
			md, note := cutMarkdown(md, webPageChars)
			where := page.URL.Host + strings.TrimSuffix(page.URL.Path, "/")
			summary := fmt.Sprintf("Read the web page at %s.", where)
			if title != "" {
				summary = fmt.Sprintf("Read the web page %s (%s).", quoted(title), page.URL.Host)
			}
			if md == "" {
				summary = fmt.Sprintf("Read %s, which has no readable text (it may need a page script or a sign-in).", where)
			}
			data := map[string]any{"url": page.URL.String(), "title": title, "markdown": md, "chars": total}
			if note != "" {
				data["note"] = note
			}
			return Result{Summary: summary, Data: data}, nil
		},
	})
}

// noteRoom is what cutMarkdown keeps free for its note: the count and five clipped headings.
const noteRoom = 420

// cutMarkdown keeps the start of md within limit characters, note included, cutting at a
// paragraph where one is near. The note says how much was left out and names the sections in it,
// so the model knows what it has not read rather than taking the start for the whole page.
func cutMarkdown(md string, limit int) (kept, note string) {
	r := []rune(md)
	if len(r) <= limit {
		return md, ""
	}
	kept = string(r[:limit-noteRoom])
	if i := strings.LastIndex(kept, "\n\n"); i > len(kept)*3/4 {
		kept = kept[:i]
	}
	// A heading at the very end would promise a section that was cut; leave it to the note.
	for {
		i := strings.LastIndex(kept, "\n")
		if i < 0 || !strings.HasPrefix(strings.TrimSpace(kept[i:]), "#") {
			break
		}
		kept = strings.TrimRight(kept[:i], "\n")
	}
	rest := md[len(kept):]
	var heads []string
	for _, line := range strings.Split(rest, "\n") {
		if h, ok := strings.CutPrefix(strings.TrimSpace(line), "#"); ok {
			h = strings.TrimSpace(strings.TrimLeft(h, "#"))
			if h != "" {
				heads = append(heads, clip(h, 50))
			}
		}
	}
	note = fmt.Sprintf("Left out the last %d of %d characters", utf8.RuneCountInString(rest), len(r))
	if len(heads) > 0 {
		note += ", with the sections " + titleList(heads)
	}
	return strings.TrimSpace(kept), note + "."
}
