package browser

import (
	"regexp"
	"strings"
)

// consequentialRe are the words in an element's name that make clicking it act for its owner in
// the world: buying, paying, deleting, cancelling, sending, publishing, subscribing.
var consequentialRe = regexp.MustCompile(`(?i)\b(buy|pay|purchase|order|checkout|check out|subscribe|delete|remove|cancel|send|publish|post)\b`)

// Consequential is the word in an element's name ("Place order") that makes clicking it act for
// its owner, lower-cased ("order"), or "". The runtime asks before such a click unless the
// owner's words asked for it (AskedFor).
func Consequential(name string) string {
	return strings.ToLower(consequentialRe.FindString(name))
}

// AskedFor says whether the owner's words hold word, or a word made from it ("delete" in
// "deleted", "order" in "ordering"), or one meaning the same ("buy" for "order").
func AskedFor(said, word string) bool {
	said = strings.ToLower(said)
	alts := []string{word}
	switch word {
	case "check out", "checkout":
		alts = []string{"check out", "checkout", "buy", "order", "purchase"}
	case "buy", "purchase", "order":
		alts = []string{"buy", "purchase", "order"}
	}
	for _, a := range alts {
		if regexp.MustCompile(`\b` + regexp.QuoteMeta(a)).MatchString(said) {
			return true
		}
	}
	return false
}
