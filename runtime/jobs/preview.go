package jobs

import (
	"bytes"
	"encoding/json"
	"unicode/utf8"
)

// The trace keeps previews, not whole texts (the spec's TRACE_PREVIEW).
const (
	previewInput   = 600    // a tool call's input
	previewOutput  = 1_200  // a tool call's output
	previewText    = 2_000  // thinking and messages
	previewSummary = 20_000 // the final reply
	maxSteps       = 600    // tool calls kept in one run's trace
)

// trim redacts s and cuts it to at most n characters (not bytes), marking a cut with "…".
// Redaction comes first, so a secret cut in half is never left half-visible.
func trim(s string, n int) string {
	s = Redact(s)
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	i, count := 0, 0
	for i = range s {
		if count == n-1 {
			break
		}
		count++
	}
	return s[:i] + "…"
}

// inputPreview is a tool call's input as one line of compact JSON (or its text, for a string),
// trimmed.
func inputPreview(raw json.RawMessage) string {
	if len(raw) == 0 {
		return ""
	}
	var str string
	if json.Unmarshal(raw, &str) == nil {
		return trim(str, previewInput)
	}
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		return trim(string(raw), previewInput)
	}
	return trim(b.String(), previewInput)
}
