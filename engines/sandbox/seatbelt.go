package sandbox

import (
	"strings"

	"github.com/ensemblework/ensemble/engines"
)

// seatbeltDevices are written by ordinary programs wherever they run.
var seatbeltDevices = []string{"/dev/null", "/dev/zero", "/dev/tty", "/dev/dtracehelper", "/dev/urandom", "/dev/random"}

// seatbeltProfile is the Seatbelt profile (sandbox-exec -p) for sb: everything allowed but
// writing outside the writable folders (and the usual devices and the system's temporary
// folders' own), and reading or writing what the rules hide. A later rule wins over an earlier
// one in Seatbelt, so the rules go in the order [rules] gives. real sees the computer's links
// (/tmp is /private/tmp on macOS).
func seatbeltProfile(sb engines.Sandbox, extra Extra, real func(string) string, list func(string) []string) string {
	var b strings.Builder
	b.WriteString("(version 1)\n(allow default)\n")
	b.WriteString("(deny file-write*)\n")
	b.WriteString("(allow file-write*")
	for _, d := range seatbeltDevices {
		b.WriteString(" (literal " + sbString(d) + ")")
	}
	b.WriteString(" (regex #\"^/dev/fd/\") (regex #\"^/dev/ttys\"))\n")
	// Reading other processes' memory or environment is another account's business.
	b.WriteString("(deny process-info* (target others))\n")
	for _, r := range rules(sb, extra) {
		p := sbString(real(r.path))
		switch r.acc {
		case write:
			b.WriteString("(allow file-read* file-write* (subpath " + p + "))\n")
		case allowRead:
			b.WriteString("(allow file-read* (subpath " + p + "))\n")
		case denyWrite:
			b.WriteString("(deny file-write* (subpath " + p + "))\n")
		case denyRead:
			b.WriteString("(deny file-read* file-write* (subpath " + p + "))\n")
		case scratch:
			b.WriteString("(allow file-write* (subpath " + p + "))\n")
			for _, e := range list(real(r.path)) {
				b.WriteString("(deny file-write* (subpath " + sbString(e) + "))\n")
			}
		}
	}
	return b.String()
}

// sbString quotes s as a Seatbelt string.
func sbString(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`)
	return `"` + r.Replace(s) + `"`
}
