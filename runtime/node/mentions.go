package node

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// MaxHandle is the longest handle a node can have, in characters.
const MaxHandle = 32

// Mentions returns the handles a message names as @handle, lowercased, in the order they first
// appear and without duplicates. A handle is ASCII letters, digits, "-" and "_". The @ counts only
// at the start or after a character that cannot be part of an email address's local part, so
// "ana@example.com" names nobody. Trailing "-" and "_" are dropped, so "@dev_," names "dev".
func Mentions(body string) []string {
	var out []string
	seen := map[string]bool{}
	for i := 0; i < len(body); i++ {
		if body[i] != '@' {
			continue
		}
		if i > 0 {
			prev, _ := utf8.DecodeLastRuneInString(body[:i])
			if emailChar(prev) {
				continue
			}
		}
		j := i + 1
		for j < len(body) && handleByte(body[j]) {
			j++
		}
		h := strings.ToLower(strings.TrimRight(body[i+1:j], "-_"))
		if h != "" && !seen[h] {
			seen[h] = true
			out = append(out, h)
		}
		i = j - 1
	}
	return out
}

// emailChar reports whether r may sit right before an email address's @; an @ after one is an
// address, not a mention.
func emailChar(r rune) bool {
	return unicode.IsLetter(r) || unicode.IsDigit(r) || strings.ContainsRune("_-.+%@", r)
}

func handleByte(b byte) bool {
	return b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= '0' && b <= '9' || b == '-' || b == '_'
}

// ValidHandle reports whether s can be a node's handle as stored: 1 to MaxHandle lowercase ASCII
// letters, digits, "-" and "_", starting and ending with a letter or digit. It says nothing of
// reserved words; ask ReservedHandle for those.
func ValidHandle(s string) bool {
	if s == "" || len(s) > MaxHandle {
		return false
	}
	for i := 0; i < len(s); i++ {
		b := s[i]
		if b >= 'A' && b <= 'Z' || !handleByte(b) {
			return false
		}
	}
	return alnum(s[0]) && alnum(s[len(s)-1])
}

func alnum(b byte) bool { return b >= 'a' && b <= 'z' || b >= '0' && b <= '9' }

// ReservedHandle reports whether s is one of the words that mention every node in a room, which
// no node may take as its handle.
func ReservedHandle(s string) bool {
	switch strings.ToLower(s) {
	case "everyone", "nodes":
		return true
	}
	return false
}

// Slugify makes a handle from a name: lowercase ASCII letters and digits, every other run of
// characters one "-", trimmed, at most MaxHandle characters. A name with no letters or digits
// gives "", which the caller replaces (a template's slug, or a number).
func Slugify(name string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(name) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			if dash && b.Len() > 0 {
				b.WriteByte('-')
			}
			dash = false
			b.WriteRune(r)
			continue
		}
		dash = true
	}
	s := b.String()
	if len(s) > MaxHandle {
		s = strings.TrimRight(s[:MaxHandle], "-")
	}
	return s
}
