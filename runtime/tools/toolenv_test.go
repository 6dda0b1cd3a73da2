package tools

import (
	"context"
	"strings"
	"testing"

	"github.com/ensemblework/ensemble/runtime/ledger"
	"github.com/ensemblework/ensemble/runtime/records"
	"github.com/ensemblework/ensemble/runtime/store"
	"github.com/ensemblework/ensemble/runtime/tools/toolstest"
)

// toolEnv runs tools straight against a records service on a fresh SQLite file, as a turn would:
// the input checked against the schema first, a write as its own Undo group.
type toolEnv struct {
	st  *store.Store
	w   *ledger.Writer
	rec *records.Service
	tc  *ToolContext
	reg *Registry
}

var byPerson = ledger.Actor{Kind: ledger.Person}

func newToolEnv(t *testing.T) *toolEnv {
	t.Helper()
	st, w, rec := toolstest.Records(t)
	return &toolEnv{st: st, w: w, rec: rec, reg: HubTools(),
		tc: &ToolContext{Records: rec, Actor: ledger.Actor{Kind: ledger.Assistant, ID: "conv_test"}}}
}

func (e *toolEnv) tool(t *testing.T, name string) *Tool {
	t.Helper()
	tl := e.reg.Get(name)
	if tl == nil {
		t.Fatalf("no tool %s", name)
	}
	return tl
}

// raw is a tool's input as JSON.
var raw = toolstest.Input

// call validates input and runs the tool. A schema refusal comes back as the error.
func (e *toolEnv) call(t *testing.T, name string, input any) (Result, error) {
	t.Helper()
	tl := e.tool(t, name)
	in := raw(t, input)
	if err := tl.Validate(in); err != nil {
		return Result{}, &schemaError{err}
	}
	return tl.Call(context.Background(), e.tc, in)
}

// must is call that must succeed.
func (e *toolEnv) must(t *testing.T, name string, input any) Result {
	t.Helper()
	r, err := e.call(t, name, input)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return r
}

type schemaError struct{ err error }

func (e *schemaError) Error() string { return "schema: " + e.err.Error() }

// preview validates and prepares input and asks the write what it would do, as a turn holding it
// would.
func (e *toolEnv) preview(t *testing.T, name string, input any) (string, error) {
	t.Helper()
	tl := e.tool(t, name)
	in := raw(t, input)
	if err := tl.Validate(in); err != nil {
		return "", &schemaError{err}
	}
	in, err := tl.Prepared(context.Background(), e.tc, in)
	if err != nil {
		return "", err
	}
	return tl.Preview(context.Background(), e.tc, in)
}

// writes counts the ledger's groups and changes: anything written through records adds to both.
func (e *toolEnv) writes(t *testing.T) int {
	t.Helper()
	var n int
	if err := e.st.Reader().QueryRow("SELECT (SELECT count(*) FROM ledger_groups) + (SELECT count(*) FROM ledger_changes)").Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// writeCase is one call of a write tool and what must follow.
type writeCase struct {
	name    string
	input   any
	preview string // the preview, or "" not to check it
	summary string // the summary, or the error's text when err
	err     bool
	schema  bool // the schema refuses it, before the tool runs
	check   func(t *testing.T)
}

// runWrites runs each case: the preview first, which must write nothing, then the call, which
// must land as one Undo group (or, refused, write nothing).
func (e *toolEnv) runWrites(t *testing.T, tool string, cases []writeCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			before := e.writes(t)
			p, perr := e.preview(t, tool, tc.input)
			if e.writes(t) != before {
				t.Fatal("the preview wrote")
			}
			var se *schemaError
			if tc.schema {
				if _, ok := perr.(*schemaError); !ok {
					t.Fatalf("preview err %v, want a schema refusal", perr)
				}
				_, err := e.call(t, tool, tc.input)
				if !asSchema(err, &se) {
					t.Fatalf("call err %v, want a schema refusal", err)
				}
				if e.writes(t) != before {
					t.Fatal("a refused call wrote")
				}
				return
			}
			if tc.err {
				if perr == nil || !strings.Contains(perr.Error(), tc.summary) {
					t.Errorf("preview err %v, want %q", perr, tc.summary)
				}
				_, err := e.call(t, tool, tc.input)
				if err == nil || !strings.Contains(err.Error(), tc.summary) {
					t.Fatalf("got err %v, want %q", err, tc.summary)
				}
				if e.writes(t) != before {
					t.Fatal("a refused call wrote")
				}
				return
			}
			if perr != nil {
				t.Fatalf("preview: %v", perr)
			}
			if tc.preview != "" && p != tc.preview {
				t.Errorf("preview %q, want %q", p, tc.preview)
			}
			r, err := e.call(t, tool, tc.input)
			if err != nil {
				t.Fatal(err)
			}
			if r.Summary != tc.summary {
				t.Errorf("summary %q, want %q", r.Summary, tc.summary)
			}
			if r.Group == "" {
				t.Error("no Undo group")
			}
			for _, ref := range r.Refs {
				if strings.Contains(r.Summary, ref.ID) || strings.Contains(p, ref.ID) {
					t.Errorf("summary or preview names the id %s", ref.ID)
				}
			}
			var groups int
			e.st.Reader().QueryRow("SELECT count(*) FROM ledger_groups WHERE seq > (SELECT coalesce(max(seq), 0) - 1 FROM ledger_groups) AND id = ?", r.Group).Scan(&groups)
			if groups != 1 {
				t.Errorf("the write is not the newest group")
			}
			if tc.check != nil {
				tc.check(t)
			}
		})
	}
}

func asSchema(err error, se **schemaError) bool {
	s, ok := err.(*schemaError)
	*se = s
	return ok
}
