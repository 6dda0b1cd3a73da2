package sessions

import "strings"

// stem reduces an English word (lower case, ASCII letters) to its stem by Porter's algorithm
// (M. F. Porter, "An algorithm for suffix stripping", 1980): ranking, ranked, ranks → rank.
// Words of one or two letters and words with other characters are left as they are. Written here
// rather than taken from a module: it is small, and the runtime's go.mod stays as it is.
func stem(w string) string {
	if len(w) <= 2 {
		return w
	}
	for i := 0; i < len(w); i++ {
		if w[i] < 'a' || w[i] > 'z' {
			return w
		}
	}
	b := []byte(w)
	b = step1a(b)
	b = step1b(b)
	b = step1c(b)
	b = step2(b)
	b = step3(b)
	b = step4(b)
	b = step5(b)
	return string(b)
}

// cons reports whether b[i] is a consonant: not a, e, i, o, u, and not a y after a consonant.
func cons(b []byte, i int) bool {
	switch b[i] {
	case 'a', 'e', 'i', 'o', 'u':
		return false
	case 'y':
		return i == 0 || !cons(b, i-1)
	}
	return true
}

// measure is m in [C](VC)^m[V] of b.
func measure(b []byte) int {
	n, i := 0, 0
	for i < len(b) && cons(b, i) {
		i++
	}
	for i < len(b) {
		for i < len(b) && !cons(b, i) {
			i++
		}
		if i >= len(b) {
			break
		}
		for i < len(b) && cons(b, i) {
			i++
		}
		n++
	}
	return n
}

func hasVowel(b []byte) bool {
	for i := range b {
		if !cons(b, i) {
			return true
		}
	}
	return false
}

// doubleCons: b ends with a double consonant.
func doubleCons(b []byte) bool {
	n := len(b)
	return n >= 2 && b[n-1] == b[n-2] && cons(b, n-1)
}

// cvc: b ends consonant-vowel-consonant, the last not w, x or y.
func cvc(b []byte) bool {
	n := len(b)
	if n < 3 || !cons(b, n-1) || cons(b, n-2) || !cons(b, n-3) {
		return false
	}
	c := b[n-1]
	return c != 'w' && c != 'x' && c != 'y'
}

func ends(b []byte, s string) bool { return strings.HasSuffix(string(b), s) }

// replace swaps suffix s for r when the stem before s has a measure above m.
func replace(b []byte, s, r string, m int) ([]byte, bool) {
	if !ends(b, s) {
		return b, false
	}
	base := b[:len(b)-len(s)]
	if measure(base) > m {
		return append(base[:len(base):len(base)], r...), true
	}
	return b, true
}

func step1a(b []byte) []byte {
	switch {
	case ends(b, "sses"), ends(b, "ies"):
		return b[:len(b)-2]
	case ends(b, "ss"):
		return b
	case ends(b, "s"):
		return b[:len(b)-1]
	}
	return b
}

func step1b(b []byte) []byte {
	if ends(b, "eed") {
		if measure(b[:len(b)-3]) > 0 {
			return b[:len(b)-1]
		}
		return b
	}
	var base []byte
	switch {
	case ends(b, "ed") && hasVowel(b[:len(b)-2]):
		base = b[:len(b)-2]
	case ends(b, "ing") && hasVowel(b[:len(b)-3]):
		base = b[:len(b)-3]
	default:
		return b
	}
	base = base[:len(base):len(base)]
	switch {
	case ends(base, "at"), ends(base, "bl"), ends(base, "iz"):
		return append(base, 'e')
	case doubleCons(base):
		if c := base[len(base)-1]; c != 'l' && c != 's' && c != 'z' {
			return base[:len(base)-1]
		}
		return base
	case measure(base) == 1 && cvc(base):
		return append(base, 'e')
	}
	return base
}

func step1c(b []byte) []byte {
	if ends(b, "y") && hasVowel(b[:len(b)-1]) {
		return append(b[:len(b)-1:len(b)-1], 'i')
	}
	return b
}

var step2Rules = [][2]string{
	{"ational", "ate"}, {"tional", "tion"}, {"enci", "ence"}, {"anci", "ance"}, {"izer", "ize"},
	{"bli", "ble"}, {"alli", "al"}, {"entli", "ent"}, {"eli", "e"}, {"ousli", "ous"},
	{"ization", "ize"}, {"ation", "ate"}, {"ator", "ate"}, {"alism", "al"}, {"iveness", "ive"},
	{"fulness", "ful"}, {"ousness", "ous"}, {"aliti", "al"}, {"iviti", "ive"}, {"biliti", "ble"},
	{"logi", "log"},
}

var step3Rules = [][2]string{
	{"icate", "ic"}, {"ative", ""}, {"alize", "al"}, {"iciti", "ic"}, {"ical", "ic"}, {"ful", ""}, {"ness", ""},
}

var step4Suffixes = []string{"al", "ance", "ence", "er", "ic", "able", "ible", "ant", "ement", "ment",
	"ent", "ion", "ou", "ism", "ate", "iti", "ous", "ive", "ize"}

// rules applies the first rule whose suffix b ends with, if the stem's measure is above 0.
func rules(b []byte, rs [][2]string) []byte {
	for _, r := range rs {
		if out, matched := replace(b, r[0], r[1], 0); matched {
			return out
		}
	}
	return b
}

func step2(b []byte) []byte { return rules(b, step2Rules) }
func step3(b []byte) []byte { return rules(b, step3Rules) }

func step4(b []byte) []byte {
	// The longest suffix wins: "ement" before "ment" before "ent".
	best := ""
	for _, s := range step4Suffixes {
		if ends(b, s) && len(s) > len(best) {
			best = s
		}
	}
	if best == "" {
		return b
	}
	base := b[:len(b)-len(best)]
	if measure(base) <= 1 {
		return b
	}
	if best == "ion" {
		if n := len(base); n == 0 || (base[n-1] != 's' && base[n-1] != 't') {
			return b
		}
	}
	return base
}

func step5(b []byte) []byte {
	if ends(b, "e") {
		base := b[:len(b)-1]
		if m := measure(base); m > 1 || (m == 1 && !cvc(base)) {
			b = base
		}
	}
	if measure(b) > 1 && doubleCons(b) && b[len(b)-1] == 'l' {
		b = b[:len(b)-1]
	}
	return b
}
