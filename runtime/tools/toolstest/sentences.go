package toolstest

import "regexp"

// Checks for sentences built around other sentences (runtime/tools' Clause and Sentence).

// Doubled is punctuation that ends one clause and starts the next with nothing between:
// "“Draft brief”. was", "applied.." or "done.:".
var Doubled = regexp.MustCompile(`[.!?;:,]["”’)]?[.!?;:,]`)

// MidStop is a sentence's end inside a sentence: a part put in with its full stop, "… “Draft
// brief”. was already applied".
var MidStop = regexp.MustCompile(`[.!?]["”’)]?\s+\p{Ll}`)
