// Package keyform is the shape of the context bridge's ens_ keys and of the runtime's launch
// token: what the bridge process checks of a key before it reaches the runtime, without the
// store that keeps the keys.
package keyform

import "strings"

// Prefix starts every key. The runtime's launch token starts with "ens_launch_", which is never a key.
const Prefix = "ens_"

const launchPrefix = "ens_launch_"

// Looks reports whether s is shaped like a key (not whether it is one).
func Looks(s string) bool {
	return strings.HasPrefix(s, Prefix) && !strings.HasPrefix(s, launchPrefix) && len(s) > len(Prefix)+16
}

// IsLaunchToken reports whether s is shaped like the runtime's launch token.
func IsLaunchToken(s string) bool { return strings.HasPrefix(s, launchPrefix) }
