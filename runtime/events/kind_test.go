package events

import (
	"strings"
	"testing"
)

func TestCheck(t *testing.T) {
	for _, tc := range []struct {
		name  string
		specs []Spec
		want  string // in the error; "" for none
	}{
		{"fine", []Spec{{Kind: "run.started"}, {Kind: "task.created"}, {Kind: KindReset}}, ""},
		{"no family", []Spec{{Kind: "started"}}, "has no family"},
		{"empty family", []Spec{{Kind: ".started"}}, "has no family"},
		{"twice", []Spec{{Kind: "run.started"}, {Kind: "run.started"}}, "declared twice"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := Check(tc.specs)
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("Check = %v, want nil", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Errorf("Check = %v, want an error saying %q", err, tc.want)
			}
		})
	}
}

func TestFamily(t *testing.T) {
	for k, want := range map[Kind]string{"run.tool_start": "run", "task.created": "task", "reset": "reset", "": ""} {
		if got := k.Family(); got != want {
			t.Errorf("%q.Family() = %q, want %q", k, got, want)
		}
	}
}

type payload struct{ ID string }

func TestTypeScript(t *testing.T) {
	got, err := TypeScript("Generated.", []Spec{
		{Kind: KindReset, Payload: Reset{}},
		{Kind: "run.tool_start", Payload: payload{}, Doc: "a step began"},
		{Kind: "task.created"},
		{Kind: "run.ended", Payload: payload{}},
	})
	if err != nil {
		t.Fatal(err)
	}
	want := `// Generated.

/** events.Reset */
export const RESET = 'reset';

/** events.payload: a step began */
export const RUN_TOOL_START = 'run.tool_start';

export const TASK_CREATED = 'task.created';

/** events.payload */
export const RUN_ENDED = 'run.ended';

/** Every kind of the run family. */
export const RUN_KINDS = [RUN_TOOL_START, RUN_ENDED] as const;

/** Every kind of the task family. */
export const TASK_KINDS = [TASK_CREATED] as const;

/** The kinds of each family. */
export const FAMILIES = {
  run: RUN_KINDS,
  task: TASK_KINDS,
} as const;

/** Every kind the runtime emits. */
export const ALL_KINDS = [RESET, RUN_TOOL_START, TASK_CREATED, RUN_ENDED] as const;

export type EventKind = (typeof ALL_KINDS)[number];
`
	if string(got) != want {
		t.Errorf("TypeScript =\n%s\nwant\n%s", got, want)
	}
	if _, err := TypeScript("", []Spec{{Kind: "x"}}); err == nil {
		t.Error("TypeScript accepted a kind without a family")
	}
}
