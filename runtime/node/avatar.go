package node

import (
	"regexp"
	"slices"
	"strings"

	"github.com/ensemblework/ensemble/runtime/problem"
)

var colorRe = regexp.MustCompile(`^#[0-9a-fA-F]{6}$`)

// check refuses a look the UI cannot draw: an unknown shape, or a colour that is not #rrggbb.
func (a Avatar) check() error {
	if !slices.Contains(Shapes, a.Shape) {
		return problem.Invalid("A node's shape is one of %s, not %q.", strings.Join(Shapes, ", "), a.Shape)
	}
	if a.Color != "" && !colorRe.MatchString(a.Color) {
		return problem.Invalid("A node's colour is #rrggbb, not %q.", a.Color)
	}
	if len(a.Eyes) > 20 {
		return problem.Invalid("A node's eyes are a short name, not %q.", a.Eyes)
	}
	return nil
}
