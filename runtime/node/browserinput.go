package node

import (
	"math"
	"regexp"
	"unicode/utf8"

	"github.com/ensemblework/ensemble/browser"
	"github.com/ensemblework/ensemble/runtime/problem"
)

// browserKeyRe are the keys a browser view sends as a keyboard does (spec 002 §8.16.2): one
// character or a named key, after Ctrl+, Alt+, Shift+ or Meta+.
var browserKeyRe = regexp.MustCompile(`^((Ctrl|Alt|Shift|Meta)\+){0,3}(.|Enter|Tab|Backspace|Escape|Delete|Insert|Home|End|PageUp|PageDown|ArrowUp|ArrowDown|ArrowLeft|ArrowRight|Space|F[1-9]|F1[0-2])$`)

const maxWheel = 10000 // CSS pixels a wheel event scrolls at most

// browserInputOf checks one of the owner's inputs to a tab and makes it the broker's.
func browserInputOf(in Input) (browser.Input, error) {
	frac := func(f float64) bool { return f >= 0 && f <= 1 && !math.IsNaN(f) }
	out := browser.Input{Kind: in.T, X: in.X, Y: in.Y}
	switch in.T {
	case "tap", "down", "up", "move", "wheel":
		if !frac(in.X) || !frac(in.Y) {
			return browser.Input{}, problem.Invalid("A %s's x and y are fractions of the picture, 0 to 1.", in.T)
		}
		if in.T == "wheel" {
			if math.Abs(in.DX) > maxWheel || math.Abs(in.DY) > maxWheel || math.IsNaN(in.DX+in.DY) {
				return browser.Input{}, problem.Invalid("A wheel scrolls at most %d pixels at once.", maxWheel)
			}
			out.DX, out.DY = in.DX, in.DY
		}
	case "key":
		if !utf8.ValidString(in.Key) || !browserKeyRe.MatchString(in.Key) {
			return browser.Input{}, problem.Invalid("That is not a key a keyboard sends.")
		}
		out.Key = in.Key
	case "text":
		if in.Text == "" || len(in.Text) > maxOwnerText || !utf8.ValidString(in.Text) {
			return browser.Input{}, problem.Invalid("A text event holds 1 byte to %d KB of text.", maxOwnerText>>10)
		}
		out.Text = in.Text
	default:
		return browser.Input{}, problem.Invalid("%q is not an event of a browser's view; send tap, down, up, move, wheel, key, text or ping.", in.T)
	}
	return out, nil
}
