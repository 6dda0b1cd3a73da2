package tools

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/ensemblework/ensemble/runtime/records"
)

// bareID accepts a record's id or its handle (ensemble://page/pag_…): the model is shown records
// as links, and passes either back.
func bareID(s, kind string) string {
	s = strings.TrimSpace(s)
	if k, id, ok := records.ParseHandle(s); ok && k == kind {
		return id
	}
	return s
}

// missing turns records' not-found error into a sentence the model can act on. It names no id:
// tool errors meant for the model never do (spec 000 §4.1).
func missing(err error, kind, listTool string) error {
	if records.IsNotFound(err) {
		return fmt.Errorf("There is no %s with that id (or it is in Trash); call %s to find it.", kind, listTool)
	}
	return err
}

// textBudget is how much of a page or a task's page one result carries, leaving room in
// MaxToolResultChars for the summary, the other fields and JSON's escapes.
const textBudget = 4500

// textPart is the part of a Markdown text a read returns, with a note whenever that is not the
// whole of it, so an excerpt is never taken for the whole document. Without an offset it is the
// start and the end with the middle cut; with one, the characters from there on. tool is the tool
// to call again.
func textPart(s string, offset *int, tool string) (part, note string) {
	n := utf8.RuneCountInString(s)
	if offset == nil {
		if n <= textBudget {
			return s, ""
		}
		return headAndTail(s, textBudget), fmt.Sprintf("An excerpt: the text has %d characters and the middle was cut; call %s with an offset to read a part in full.", n, tool)
	}
	r := []rune(s)
	from := min(max(*offset, 0), n)
	to := min(from+textBudget, n)
	part = string(r[from:to])
	switch {
	case from == 0 && to == n:
		return part, ""
	case to < n:
		return part, fmt.Sprintf("Characters %d–%d of %d; call %s again with offset %d for more.", from+1, to, n, tool, to)
	}
	return part, fmt.Sprintf("Characters %d–%d of %d, to the end.", min(from+1, n), to, n)
}
