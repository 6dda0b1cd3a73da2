package api

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"log/slog"
)

// LaunchToken is the secret a runtime makes at each start and writes only to api.json (mode 0600):
// whoever can read that file may drive the runtime. It never prints itself: String, Format,
// MarshalJSON and LogValue all redact it; Reveal is the one way to the value.
type LaunchToken struct{ v string }

// NewLaunchToken returns a fresh random token.
func NewLaunchToken() LaunchToken { return LaunchToken{v: "ens_launch_" + randomText(32)} }

// ParseLaunchToken wraps a token read back from api.json.
func ParseLaunchToken(s string) LaunchToken { return LaunchToken{v: s} }

// Reveal returns the secret, for api.json and the Authorization header.
func (t LaunchToken) Reveal() string { return t.v }

// Equal compares in constant time.
func (t LaunchToken) Equal(s string) bool {
	return t.v != "" && subtle.ConstantTimeCompare([]byte(t.v), []byte(s)) == 1
}

func (t LaunchToken) String() string                { return "launch-token:[redacted]" }
func (t LaunchToken) Format(f fmt.State, verb rune) { fmt.Fprint(f, t.String()) }
func (t LaunchToken) MarshalJSON() ([]byte, error)  { return []byte(`"[redacted]"`), nil }
func (t LaunchToken) LogValue() slog.Value          { return slog.StringValue(t.String()) }
func (t LaunchToken) GoString() string              { return t.String() }

// randomText returns n random bytes as URL-safe base64.
func randomText(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

// hashText is what the database keeps of a secret: its SHA-256, hex.
func hashText(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}
