package sessions

import (
	"path"
	"regexp"
	"slices"
	"strings"
	"unicode"
)

// stopwords are common English words, dropped before stemming.
var stopwords = setOf(strings.Fields(`a about above after again against all am an and any are as at be
because been before being below between both but by can could did do does doing done down during each
few for from further had has have having he her here hers herself him himself his how i if in into is it
its itself just let me more most my myself no nor not now of off on once only or other our ours ourselves
out over own same she should so some such than that the their theirs them themselves then there these they
this those through to too under until up very was we were what when where which while who whom why will
with would you your yours yourself yourselves get got make made use using used need needs want wants
should shall may might must one two also via per etc`))

func setOf(ws []string) map[string]bool {
	m := make(map[string]bool, len(ws))
	for _, w := range ws {
		m[strings.ToLower(w)] = true
	}
	return m
}

// terms are the words of text as topic counts them: lower-cased letters and digits, without
// stopwords (and extra), each reduced to its Porter stem, in order.
func terms(text string, extra map[string]bool) []string {
	var out []string
	for _, w := range strings.FieldsFunc(strings.ToLower(text), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	}) {
		if len(w) < 2 || len(w) > 40 || stopwords[w] || extra[w] || allDigits(w) {
			continue
		}
		out = append(out, stem(w))
	}
	return out
}

func allDigits(s string) bool {
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

// bigramWeight is how much a pair of neighbouring terms counts, against 1 for one term.
const bigramWeight = 1.5

// addTerms adds text's terms and their neighbouring pairs to counts, times weight (a field's).
func addTerms(counts map[string]float64, text string, weight float64, extra map[string]bool) {
	ts := terms(text, extra)
	for i, t := range ts {
		counts[t] += weight
		if i > 0 {
			counts[ts[i-1]+" "+t] += weight * bigramWeight
		}
	}
}

var (
	urlRE   = regexp.MustCompile(`https?://[^\s<>()"'\x60]+`)
	pathRE  = regexp.MustCompile(`(?:[A-Za-z0-9_.@-]+/)*[A-Za-z0-9_-][A-Za-z0-9_.-]*\.[A-Za-z][A-Za-z0-9]{0,7}\b`)
	camelRE = regexp.MustCompile(`\b(?:[a-z][a-z0-9]*[A-Z][A-Za-z0-9]*|[A-Z][a-z0-9]+[A-Z][A-Za-z0-9]*)\b`)
	snakeRE = regexp.MustCompile(`\b[a-z][a-z0-9]*(?:_[a-z0-9]+)+\b`)
	issueRE = regexp.MustCompile(`(?:^|[^\w&])#(\d{1,7})\b|\b([A-Z][A-Z0-9]{1,9}-\d{1,7})\b`)
)

// Anchor kinds prefix an anchor's text.
const (
	anchorURL   = "url:"
	anchorFile  = "file:"
	anchorCode  = "code:"
	anchorIssue = "issue:"
)

// anchorsOf are the exact things text names: web addresses, file paths, code names (rankResults,
// auth_session, SessionStore) and issue or pull request numbers (#123, ABC-42), each once, with
// its kind in front. Files every repository has (ubiquitous) are left out.
func anchorsOf(text string, ubiquitous map[string]bool, into map[string]bool) {
	for _, u := range urlRE.FindAllString(text, -1) {
		into[anchorURL+strings.TrimRight(u, ".,;:!?")] = true
	}
	rest := urlRE.ReplaceAllString(text, " ")
	for _, p := range pathRE.FindAllString(rest, -1) {
		p = strings.TrimPrefix(strings.TrimPrefix(p, "./"), "/")
		base := strings.ToLower(path.Base(p))
		if ubiquitous[base] || looksLikeVersion(p) {
			continue
		}
		into[anchorFile+p] = true
	}
	for _, c := range camelRE.FindAllString(rest, -1) {
		into[anchorCode+c] = true
	}
	for _, c := range snakeRE.FindAllString(rest, -1) {
		into[anchorCode+c] = true
	}
	for _, m := range issueRE.FindAllStringSubmatch(rest, -1) {
		if m[1] != "" {
			into[anchorIssue+"#"+m[1]] = true
		} else {
			into[anchorIssue+m[2]] = true
		}
	}
}

// looksLikeVersion: "1.2", "v0.3.1", "e.g" are not files.
func looksLikeVersion(p string) bool {
	if strings.Contains(p, "/") {
		return false
	}
	base, ext, _ := strings.Cut(p, ".")
	return allDigits(strings.TrimPrefix(base, "v")) || len(base) <= 1 && len(ext) <= 1
}

// sameAnchor reports whether a of the new task names b of a session. A file named by its name
// alone matches the same file named by its path (jobs.go, runtime/jobs/jobs.go).
func sameAnchor(a, b string) bool {
	if a == b {
		return true
	}
	if !strings.HasPrefix(a, anchorFile) || !strings.HasPrefix(b, anchorFile) {
		return false
	}
	pa, pb := a[len(anchorFile):], b[len(anchorFile):]
	return strings.HasSuffix(pa, "/"+pb) || strings.HasSuffix(pb, "/"+pa)
}

// sharedAnchors are the anchors of task that the session names, each counted once (a file shared
// by its path is not counted again by its name).
func sharedAnchors(task, session map[string]bool) []string {
	var out []string
	for a := range task {
		if session[a] {
			out = append(out, a)
			continue
		}
		if !strings.HasPrefix(a, anchorFile) {
			continue
		}
		for b := range session {
			if sameAnchor(a, b) {
				out = append(out, a)
				break
			}
		}
	}
	// A file named both by its path and by its name counts once.
	keep := out[:0]
	for _, a := range out {
		dup := false
		for _, b := range out {
			if a != b && strings.HasPrefix(a, anchorFile) && strings.HasPrefix(b, anchorFile) &&
				strings.HasSuffix(b[len(anchorFile):], "/"+a[len(anchorFile):]) {
				dup = true
				break
			}
		}
		if !dup {
			keep = append(keep, a)
		}
	}
	slices.Sort(keep)
	return keep
}

// containsPhrase reports whether text (lower case) has phrase as whole words.
func containsPhrase(text, phrase string) bool {
	phrase = strings.ToLower(phrase)
	for i := 0; ; {
		j := strings.Index(text[i:], phrase)
		if j < 0 {
			return false
		}
		at := i + j
		end := at + len(phrase)
		before := at == 0 || !isWordByte(text[at-1])
		after := end == len(text) || !isWordByte(text[end])
		if before && after {
			return true
		}
		i = at + 1
	}
}

func isWordByte(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}
