package workspace

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/ensemblework/ensemble/runtime/tools"
)

// fromAssistant are the allowlist's names that are the assistant's Hub tools (runtime/tools), with
// the group ensemble_actions lists them in. The bridge runs the tool itself, from the registry the
// assistant's turn loop calls (without importing the loop), so an editor gets its schema, its
// checks (a task named by title becomes its id, or a sentence says why not), its Undo group and
// the live refresh, exactly as in Ensemble's chat. Names the assistant keeps to itself
// (hub_read_web_page, hub_assign_to_agent, hub_run_workflow) are not here: see notOffered.
var fromAssistant = []struct{ name, group string }{
	{"hub_how_to", "guides"},
	{"hub_list_tasks", "tasks"}, {"hub_get_task", "tasks"}, {"hub_create_tasks", "tasks"}, {"hub_update_task", "tasks"}, {"hub_delete_tasks", "tasks"},
	{"hub_list_pages", "pages"}, {"hub_read_page", "pages"}, {"hub_create_page", "pages"}, {"hub_update_page", "pages"}, {"hub_edit_page", "pages"},
	{"hub_list_projects", "projects"}, {"hub_create_project", "projects"}, {"hub_update_project", "projects"},
	{"hub_list_people", "people"}, {"hub_create_person", "people"}, {"hub_list_repos", "people"}, {"hub_link_repo", "people"},
	{"hub_search_work", "context"},
	{"hub_read_skill", "skills"},
}

// assistantActions returns the allowlist's entries that run the assistant's tools of reg. A name
// missing from reg is a build that lost a tool the bridge promises: it panics at start, not at a
// call.
func assistantActions(reg *tools.Registry) []*action {
	out := make([]*action, 0, len(fromAssistant))
	for _, f := range fromAssistant {
		t := reg.Get(f.name)
		if t == nil {
			panic(fmt.Sprintf("workspace: the Hub tools have no tool %s for the bridge's allowlist", f.name))
		}
		out = append(out, &action{name: t.Name, group: f.group, desc: t.Description, write: t.IsWrite,
			schema: json.RawMessage(t.Schema), tool: t})
	}
	return out
}

// actWithTool runs the assistant's tool as the key: its input is checked against the tool's schema
// (a wrong one is a 400 with that schema), its write is one transaction and Undo group recorded
// with the key's name.
func (s *Service) actWithTool(ctx context.Context, c Caller, a *action, input json.RawMessage) (map[string]any, error) {
	if len(input) == 0 || string(input) == "null" {
		input = json.RawMessage("{}")
	}
	if err := a.tool.Validate(input); err != nil {
		return nil, &Refusal{Status: http.StatusBadRequest, Msg: fmt.Sprintf("The input of %s is not right, so nothing was done. %s It takes the inputSchema here.", a.name, err),
			Extra: map[string]any{"inputSchema": a.schema}}
	}
	tc := &tools.ToolContext{Records: s.rec, Skills: s, Actor: c.Actor}
	res, err := a.tool.Call(ctx, tc, input)
	if err != nil {
		if ctx.Err() != nil || isRefusal(err) {
			return nil, err
		}
		// The assistant's tools answer a call they refuse with a sentence for the model (no task is
		// called that, no playbook has that name): the editor's model reads the same sentence.
		return nil, &Refusal{Status: http.StatusBadRequest, Msg: err.Error()}
	}
	out := map[string]any{"action": a.name, "result": res, "notice": NotInstructions}
	if a.write {
		out["undoable"] = a.tool.Undoable == tools.Undoable
		out["ledgerGroup"] = res.Group
	}
	return out, nil
}
