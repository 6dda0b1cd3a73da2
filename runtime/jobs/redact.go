package jobs

import (
	"regexp"
	"strings"
)

// The redaction rules find secrets by their shape. Each match is replaced whole, or only its
// value part for rules with a (?P<v>…) group, so "password=hunter2" reads "password=[redacted]".
// They may later move to runtime/secrets, which also knows the values of the person's own secrets.
var redactions = []*regexp.Regexp{
	// PEM private key blocks, whole.
	regexp.MustCompile(`-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY-----[\s\S]*?(?:-----END (?:[A-Z0-9]+ )*PRIVATE KEY-----|$)`),
	// Provider keys by prefix: OpenAI and Anthropic (sk-…, sk-ant-…), GitHub (ghp_, gho_, ghu_,
	// ghs_, ghr_, github_pat_), Slack (xox?-), Google (AIza), Stripe (sk_live_, rk_live_), npm, Hugging Face.
	regexp.MustCompile(`\b(?:sk-(?:ant-|proj-)?[A-Za-z0-9_\-]{16,}|gh[opusr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,}|xox[abposr]-[A-Za-z0-9\-]{10,}|AIza[0-9A-Za-z_\-]{30,}|[sr]k_(?:live|test)_[A-Za-z0-9]{16,}|npm_[A-Za-z0-9]{30,}|hf_[A-Za-z0-9]{30,})`),
	// Ensemble's own per-run tokens: a run's MCP secret and its git helper's token.
	regexp.MustCompile(`\bens_(?:run|git)_[0-9a-f]{32,}`),
	// AWS access key ids.
	regexp.MustCompile(`\b(?:AKIA|ASIA)[0-9A-Z]{16}\b`),
	// JSON Web Tokens.
	regexp.MustCompile(`\beyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}`),
	// Bearer and Basic authorization values.
	regexp.MustCompile(`(?i)\b(?:bearer|basic)\s+(?P<v>[A-Za-z0-9._~+/\-]{12,}=*)`),
	// Credentials in URLs: https://user:secret@host.
	regexp.MustCompile(`(?i)\b[a-z][a-z0-9+.\-]*://[^\s:/@]+:(?P<v>[^\s@/]+)@`),
	// name = value and "name": "value" for names that say secret.
	regexp.MustCompile(`(?i)\b[A-Za-z0-9_\-]*(?:password|passwd|pwd|secret|token|api[_\-]?key|access[_\-]?key|private[_\-]?key|client[_\-]?secret|auth)[A-Za-z0-9_\-]*["']?\s*[:=]\s*["']?(?P<v>[^\s"',;&]{4,})`),
}

// hide hides the known secrets' values in s (Options.Hide); shapes are Redact's.
func (s *Service) hide(v string) string {
	if s.opts.Hide == nil || v == "" {
		return v
	}
	return s.opts.Hide(v)
}

// hidden is t with the known secrets' values hidden in each of its texts.
func (t Trace) hidden(hide func(string) string) Trace {
	for _, f := range []*string{&t.Reason, &t.Text, &t.Input, &t.Output, &t.Summary, &t.Tool, &t.Decision, &t.Rule, &t.Model} {
		*f = hide(*f)
	}
	return t
}

// hideAll is ss with hide applied to each, in a new slice.
func hideAll(ss []string, hide func(string) string) []string {
	if ss == nil {
		return nil
	}
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = hide(s)
	}
	return out
}

// Redacted replaces a secret's value.
const Redacted = "[redacted]"

// Redact replaces what looks like a secret in s. It is applied to everything a run records or
// sends: messages, thinking, tool inputs and outputs, summaries, errors.
func Redact(s string) string {
	if s == "" {
		return s
	}
	for _, re := range redactions {
		v := re.SubexpIndex("v")
		s = re.ReplaceAllStringFunc(s, func(m string) string {
			if v < 0 {
				return Redacted
			}
			sub := re.FindStringSubmatchIndex(m)
			if sub == nil || sub[2*v] < 0 {
				return m
			}
			if val := m[sub[2*v]:sub[2*v+1]]; strings.Contains(val, Redacted) || strings.EqualFold(val, "bearer") || strings.EqualFold(val, "basic") {
				return m // already done, or the scheme of an Authorization header whose value a rule above took
			}
			return m[:sub[2*v]] + Redacted + m[sub[2*v+1]:]
		})
	}
	return s
}
