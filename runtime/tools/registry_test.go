package tools

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/ensemblework/ensemble/runtime/ledger"
	"github.com/ensemblework/ensemble/runtime/records"
)

// TestRegisterRefuses: a tool that leaves out a field spec 000 §4 asks for, or declares one that
// cannot be true of it, is refused with a reason naming the field.
func TestRegisterRefuses(t *testing.T) {
	run := func(context.Context, *ToolContext, json.RawMessage) (Result, error) { return Result{}, nil }
	write := func(context.Context, *ToolContext, *records.Batch, json.RawMessage) (Result, error) {
		return Result{}, nil
	}
	outside := func(context.Context, *ToolContext, json.RawMessage, func(*ledger.Tx, Result) error) (Result, error) {
		return Result{}, nil
	}
	preview := func(context.Context, *ToolContext, json.RawMessage) (string, error) { return "", nil }
	prepare := func(_ context.Context, _ *ToolContext, in json.RawMessage) (json.RawMessage, error) { return in, nil }
	asRead := func(t *Tool) { t.Write, t.Preview, t.Undoable, t.Run, t.Risk = nil, nil, 0, run, RiskLow }

	cases := []struct {
		name   string
		change func(t *Tool)
		want   string // "" for registered
	}{
		{"a complete write", func(*Tool) {}, ""},
		{"a complete read", asRead, ""},
		{"a complete outside write", func(t *Tool) { t.Write, t.Outside, t.Undoable = nil, outside, NoUndo }, ""},
		{"no area", func(t *Tool) { t.Area = "" }, `area "" is not one of`},
		{"an unknown area", func(t *Tool) { t.Area = "calendar" }, `area "calendar"`},
		{"no risk", func(t *Tool) { t.Risk = "" }, `risk "" is not low, medium or high`},
		{"an unknown risk", func(t *Tool) { t.Risk = "extreme" }, `risk "extreme"`},
		{"a write silent on Undo", func(t *Tool) { t.Undoable = 0 }, "must say whether it can be undone"},
		{"a write without a preview", func(t *Tool) { t.Preview = nil }, "needs a preview"},
		{"an outside write claiming Undo", func(t *Tool) { t.Write, t.Outside = nil, outside }, "has no Undo"},
		{"a read above low risk", func(t *Tool) { asRead(t); t.Risk = RiskHigh }, "its risk is low"},
		{"a read declaring Undo", func(t *Tool) { asRead(t); t.Undoable = Undoable }, "nothing to undo or prepare"},
		{"a read with Prepare", func(t *Tool) { asRead(t); t.Prepare = prepare }, "nothing to undo or prepare"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tl := Tool{Name: "hub_test", Area: "tasks", Risk: RiskMedium, Undoable: Undoable,
				Schema: json.RawMessage(`{"type":"object"}`), Write: write, Preview: preview}
			c.change(&tl)
			err := NewRegistry().Register(tl)
			switch {
			case c.want == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
				t.Fatalf("err %v, want %q", err, c.want)
			}
		})
	}
}

// TestHubToolsContract pins how the Hub's tools declare area, risk, Undo and Prepare: deleting,
// assigning and workflows are high risk, an assignment cannot be undone, and the writes that name
// existing records prepare them.
func TestHubToolsContract(t *testing.T) {
	reg := HubTools()
	cases := []struct {
		tool    string
		area    string
		risk    Risk
		undo    Undo
		prepare bool
	}{
		{"hub_list_tasks", "tasks", RiskLow, 0, false},
		{"hub_create_tasks", "tasks", RiskMedium, Undoable, false},
		{"hub_update_task", "tasks", RiskMedium, Undoable, true},
		{"hub_delete_tasks", "tasks", RiskHigh, Undoable, true},
		{"hub_create_page", "pages", RiskLow, Undoable, false},
		{"hub_update_page", "pages", RiskMedium, Undoable, true},
		{"hub_edit_page", "pages", RiskMedium, Undoable, true},
		{"hub_update_project", "projects", RiskMedium, Undoable, true},
		{"hub_create_person", "people", RiskLow, Undoable, false},
		{"hub_link_repo", "repos", RiskLow, Undoable, false},
		{"hub_search_work", "search", RiskLow, 0, false},
		{"hub_read_web_page", "web", RiskLow, 0, false},
		{"hub_assign_to_agent", "agents", RiskHigh, NoUndo, true},
		{"hub_how_to", "skills", RiskLow, 0, false},
		{"hub_read_skill", "skills", RiskLow, 0, false},
		{"hub_run_workflow", "workflows", RiskHigh, Undoable, false},
	}
	for _, c := range cases {
		tl := reg.Get(c.tool)
		if tl == nil {
			t.Errorf("no tool %s", c.tool)
			continue
		}
		if tl.Area != c.area || tl.Risk != c.risk || tl.Undoable != c.undo || (tl.Prepare != nil) != c.prepare {
			t.Errorf("%s: area %q, risk %q, undo %d, prepare %v; want %q, %q, %d, %v",
				c.tool, tl.Area, tl.Risk, tl.Undoable, tl.Prepare != nil, c.area, c.risk, c.undo, c.prepare)
		}
	}
}
