package assistant

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/ensemblework/ensemble/runtime/problem"
	"github.com/ensemblework/ensemble/runtime/tools"
)

// writeAreas are the areas whose writes the person can allow or not (spec 000 §7: allowed write
// areas). Every write tool's area is one of them.
var writeAreas = []string{"tasks", "pages", "projects", "people", "repos", "agents", "workflows"}

// allows reports whether the settings let the assistant offer and run t: every read, and a write
// whose area is allowed.
func (st Settings) allows(t *tools.Tool) bool {
	return t != nil && (!t.IsWrite || slices.Contains(st.AllowedWriteAreas, t.Area))
}

// areaOff is the sentence for a write whose area the person turned off.
func areaOff(t *tools.Tool) error {
	return fmt.Errorf("The person has turned off the assistant's changes to %s (Settings → Assistant); nothing was done.", t.Area)
}

// toolOff is the sentence for a call of a write the person turned off: the tool is named as off.
func toolOff(t *tools.Tool) string {
	return fmt.Sprintf("%s is off: the person has turned off the assistant's changes to %s (Settings → Assistant), so nothing was done.", t.Name, t.Area)
}

// callable is what a turn's model may call of offered: the tools the settings allow.
func callable(offered []string, reg *tools.Registry, st Settings) []string {
	var out []string
	for _, n := range offered {
		if st.allows(reg.Get(n)) {
			out = append(out, n)
		}
	}
	return out
}

// unknownTool is the sentence for a call of a tool the turn does not have: it names the tools the
// model may call, and only those.
func unknownTool(name string, may []string) string {
	if len(may) == 0 {
		return fmt.Sprintf("There is no tool named %q in this turn, and no tool can be called now. Nothing was done.", name)
	}
	return fmt.Sprintf("There is no tool named %q in this turn; the tools you can call are %s. Nothing was done.", name, strings.Join(may, ", "))
}

// writeAllowed checks a write against the settings as they are now, at a call and again at Apply.
func (s *Service) writeAllowed(ctx context.Context, t *tools.Tool) error {
	if !t.IsWrite {
		return nil
	}
	st, err := s.Settings(ctx)
	if err != nil {
		return err
	}
	if !st.allows(t) {
		return areaOff(t)
	}
	return nil
}

// checkAreas checks a list of allowed write areas and puts it in writeAreas' order.
func checkAreas(in []string) ([]string, error) {
	out := []string{}
	for _, a := range writeAreas {
		if slices.Contains(in, a) {
			out = append(out, a)
		}
	}
	for _, a := range in {
		if !slices.Contains(writeAreas, a) {
			return nil, problem.Invalid("Write area %q is not one of %s.", a, strings.Join(writeAreas, ", "))
		}
	}
	return out, nil
}
