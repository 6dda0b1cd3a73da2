package secrets

import "regexp"

// keyShaped finds what looks like a key or token, whoever's it is: a private key block, a
// provider key by its prefix, or a long value named key, token or secret.
var keyShaped = regexp.MustCompile(`-----BEGIN [A-Z ]*PRIVATE KEY-----|\bAKIA[0-9A-Z]{16}\b|\bsk-[A-Za-z0-9_-]{20,}|\bghp_[A-Za-z0-9]{30,}|\bxox[bp]-[A-Za-z0-9-]{10,}|(?i:key|token|secret)["']?\s*[:=]\s*["']?(?:[A-Za-z0-9+/_-]{32,}={0,2}|[0-9a-fA-F]{32,})`)

// KeyShaped reports whether text shows something shaped like a key or token. A capture or a file
// that does is held for the person to see first, whether or not the store knows its value.
func KeyShaped(text string) bool { return keyShaped.MatchString(text) }
