package tools

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// MaxToolResultChars is the most of one tool result the model is sent.
const MaxToolResultChars = 6000

// headAndTail keeps the start and the end of s within n characters, saying what was cut.
func headAndTail(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	note := fmt.Sprintf("\n… [%d characters cut from the middle] …\n", len(r)-n)
	keep := n - utf8.RuneCountInString(note)
	if keep < 2 {
		return string(r[:n])
	}
	head := keep * 2 / 3
	return string(r[:head]) + note + string(r[len(r)-(keep-head):])
}

// quoted is a title in curly quotes.
func quoted(title string) string { return "“" + title + "”" }

// titleList names up to five titles, "“A”, “B” and “C”", then "and N more". Repeated titles get
// a number.
func titleList(titles []string) string {
	seen := map[string]int{}
	var names []string
	for _, t := range titles {
		seen[t]++
		if seen[t] > 1 {
			t = fmt.Sprintf("%s (%d)", t, seen[t])
		}
		names = append(names, quoted(t))
	}
	if len(names) > 5 {
		return strings.Join(names[:5], ", ") + fmt.Sprintf(" and %d more", len(names)-5)
	}
	switch len(names) {
	case 0:
		return ""
	case 1:
		return names[0]
	}
	return strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
}

// Plural is "1 task" or "3 tasks".
func Plural(n int, one string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %ss", n, one)
}
