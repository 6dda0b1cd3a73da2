package tools

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Sentences built around other sentences. A preview ("Add 1 task: “Draft brief”."), a receipt or
// an error's text already ends with its full stop; put inside another sentence as it is, it doubles
// the punctuation ("… “Draft brief”. was already applied."). Every sentence builder that takes such
// a part passes it through Clause (in the middle) or Sentence (at the end). The assistant's turn
// loop builds its sentences with them too.

// endPunct is what ends a sentence or a clause.
const endPunct = ".!?;:,"

// Clause is s made to sit inside a sentence: trimmed, without the punctuation it ends with. A
// closing quote or bracket stays; so does an ellipsis, which is part of what was said.
func Clause(s string) string {
	s = strings.TrimSpace(s)
	for s != "" && strings.ContainsRune(endPunct, rune(s[len(s)-1])) {
		s = strings.TrimSpace(s[:len(s)-1])
	}
	return s
}

// Sentence is s ending in exactly one full stop, or in the question or exclamation mark it ends
// with: "" stays "".
func Sentence(s string) string {
	s = strings.TrimSpace(s)
	if s == "" {
		return ""
	}
	switch s[len(s)-1] {
	case '?', '!':
		return Clause(s[:len(s)-1]) + s[len(s)-1:]
	}
	if strings.HasSuffix(s, "…") {
		return s
	}
	return Clause(s) + "."
}

// lowerFirst is s with its first letter in lower case, for a sentence put after a colon.
func lowerFirst(s string) string {
	r, n := utf8.DecodeRuneInString(s)
	if r == utf8.RuneError {
		return s
	}
	return string(unicode.ToLower(r)) + s[n:]
}
