package assistant

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Sentences built around other sentences. A preview ("Add 1 task: “Draft brief”."), a receipt or
// an error's text already ends with its full stop; put inside another sentence as it is, it doubles
// the punctuation ("… “Draft brief”. was already applied."). Every sentence builder that takes such
// a part passes it through clause (in the middle) or sentence (at the end).

// endPunct is what ends a sentence or a clause.
const endPunct = ".!?;:,"

// clause is s made to sit inside a sentence: trimmed, without the punctuation it ends with. A
// closing quote or bracket stays; so does an ellipsis, which is part of what was said.
func clause(s string) string {
	s = strings.TrimSpace(s)
	for s != "" && strings.ContainsRune(endPunct, rune(s[len(s)-1])) {
		s = strings.TrimSpace(s[:len(s)-1])
	}
	return s
}

// sentence is s ending in exactly one full stop, or in the question or exclamation mark it ends
// with: "" stays "".
func sentence(s string) string {
	s = strings.TrimSpace(s)
	if s == "" {
		return ""
	}
	switch s[len(s)-1] {
	case '?', '!':
		return clause(s[:len(s)-1]) + s[len(s)-1:]
	}
	if strings.HasSuffix(s, "…") {
		return s
	}
	return clause(s) + "."
}

// sentenceError is an error whose text is a sentence built around its cause's, which it wraps.
type sentenceError struct {
	msg   string
	cause error
}

func (e *sentenceError) Error() string { return e.msg }
func (e *sentenceError) Unwrap() error { return e.cause }

// lowerFirst is s with its first letter in lower case, for a sentence put after a colon.
func lowerFirst(s string) string {
	r, n := utf8.DecodeRuneInString(s)
	if r == utf8.RuneError {
		return s
	}
	return string(unicode.ToLower(r)) + s[n:]
}
