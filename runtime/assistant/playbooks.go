package assistant

import (
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/ensemblework/ensemble/runtime/playbooks"
	"github.com/ensemblework/ensemble/runtime/tools"
)

// Playbooks (runtime/playbooks) are routed here: a message preloads the ones it points at, and a
// turn shows the tools they name.

// builtinPlaybooks are the embedded playbooks, by name.
var builtinPlaybooks = playbooks.Builtin()

// Routing limits.
const (
	// MaxPreloaded is the most playbooks a message preloads as guides.
	MaxPreloaded = 2
	// MaxToolSchemas is the most tool schemas one model request carries.
	MaxToolSchemas = 128
)

// coreTools are shown in every turn whatever the routing (CORE_TOOLS; a name the registry lacks,
// such as hub_web_search before it exists, is skipped).
var coreTools = []string{
	"hub_how_to", "hub_read_skill", "hub_search_work", "hub_web_search", "hub_read_web_page",
	"hub_list_tasks", "hub_create_tasks", "hub_update_task", "hub_list_pages", "hub_read_page",
}

// routeInput is what routing reads of a turn.
type routeInput struct {
	Text     string   // the person's message
	Mentions []string // kinds of the records the message links (ensemble://kind/id)
	Path     string   // the open path; "" when none
}

// score is how strongly in points at p (spec 000 §3): match words give 2 (one distinct word) or 3
// (two or more), a linked record of a kind p names gives 2, and an open path under one of p's
// paths adds 1. base is the score without the path: a playbook loads only when base > 0, so an
// open page alone loads nothing and the path only breaks ties.
func score(p *playbooks.Playbook, in routeInput) (base, total int) {
	if p.Match != nil {
		words := map[string]bool{}
		for _, w := range p.Match.FindAllString(in.Text, -1) {
			words[strings.ToLower(strings.TrimSpace(w))] = true
		}
		switch {
		case len(words) >= 2:
			base += 3
		case len(words) == 1:
			base += 2
		}
	}
	for _, k := range in.Mentions {
		if slices.Contains(p.Mentions, k) {
			base += 2
			break
		}
	}
	total = base
	if in.Path != "" {
		for _, pre := range p.Paths {
			if in.Path == pre || strings.HasPrefix(in.Path, strings.TrimSuffix(pre, "/")+"/") {
				total++
				break
			}
		}
	}
	return base, total
}

// routePlaybooks returns the playbooks in preloads, best first: at most MaxPreloaded, each with a
// score from its words or mentions; ties go to the open path, then to the name.
func routePlaybooks(pbs []*playbooks.Playbook, in routeInput) []*playbooks.Playbook {
	type scored struct {
		p     *playbooks.Playbook
		total int
	}
	// A URL counts as itself, not as the words in its path ("go.dev/doc" is not a document).
	in.Text = urlRe.ReplaceAllString(in.Text, "https://")
	var hits []scored
	for _, p := range pbs {
		if base, total := score(p, in); base > 0 {
			hits = append(hits, scored{p, total})
		}
	}
	sort.SliceStable(hits, func(i, j int) bool {
		if hits[i].total != hits[j].total {
			return hits[i].total > hits[j].total
		}
		return hits[i].p.Name < hits[j].p.Name
	})
	var out []*playbooks.Playbook
	for _, h := range hits[:min(len(hits), MaxPreloaded)] {
		out = append(out, h.p)
	}
	return out
}

var urlRe = regexp.MustCompile(`https?://[^\s)>\]]+`)

// toolsetsOff is ENSEMBLE_ASSISTANT_TOOLSETS=off: every registered tool is shown (still capped).
func toolsetsOff() bool { return strings.EqualFold(os.Getenv("ENSEMBLE_ASSISTANT_TOOLSETS"), "off") }

// shownTools is which tool schemas a request carries: the core tools, the loaded playbooks' tools,
// then any registered tool no playbook names (a tool not yet given a playbook is never hidden), at
// most MaxToolSchemas, each once and only if registered. all shows every registered tool.
func shownTools(reg *tools.Registry, loaded []*playbooks.Playbook, pbs []*playbooks.Playbook, all bool) []string {
	var out []string
	seen := map[string]bool{}
	add := func(n string) {
		if !seen[n] && reg.Get(n) != nil && len(out) < MaxToolSchemas {
			seen[n] = true
			out = append(out, n)
		}
	}
	for _, n := range coreTools {
		add(n)
	}
	for _, p := range loaded {
		for _, n := range p.Tools {
			add(n)
		}
	}
	claimed := map[string]bool{}
	for _, p := range pbs {
		for _, n := range p.Tools {
			claimed[n] = true
		}
	}
	for _, n := range reg.Names() {
		if all || !claimed[n] {
			add(n)
		}
	}
	return out
}

// playbookIndex is the instructions' line per playbook, for hub_how_to.
func playbookIndex(pbs []*playbooks.Playbook) string {
	var b strings.Builder
	b.WriteString("Playbooks (guides for a kind of request; load one with hub_how_to when the request fits and none is in the context):")
	for _, p := range pbs {
		fmt.Fprintf(&b, "\n- %s: %s. For %s.", p.Name, p.Title, p.When)
	}
	return b.String()
}

// guide is a playbook as the message's context carries it.
func guide(p *playbooks.Playbook) string {
	return fmt.Sprintf("<guide name=%q>\n%s\n</guide>", p.Name, p.Body)
}

// loadedBy returns the playbook a successful hub_how_to call loaded, or nil.
func loadedBy(name string, input json.RawMessage, isErr bool) *playbooks.Playbook {
	if name != "hub_how_to" || isErr {
		return nil
	}
	var in struct {
		Name string `json:"name"`
	}
	if err := json.Unmarshal(input, &in); err != nil {
		return nil
	}
	return playbooks.Find(builtinPlaybooks, in.Name)
}
