package workspace

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/ensemblework/ensemble/runtime/jobs"
	"github.com/ensemblework/ensemble/runtime/records"
)

// Runs answers the read tools of Ensemble's own runs (jobs.RunContext) with the bridge's code, so
// an agent in a run reads exactly what an editor's agent reads through the bridge: its
// ensemble_context is Brief for the run's task, Read for a record, Context for one relation; its
// ensemble_search is Search near the task.
func (s *Service) Runs() jobs.RunContext { return runs{s} }

type runs struct{ s *Service }

func (r runs) Context(ctx context.Context, task string, in jobs.ContextInput) (any, error) {
	item := strings.TrimSpace(in.Item)
	if item == "" {
		if task == "" {
			return nil, badRequest("This run has no task in Ensemble; name a record with item (a handle like ensemble://page/pag_…).")
		}
		item = records.Handle("task", task)
		if in.Rel == "" {
			return forRuns(r.s.Brief(ctx, BriefInput{Task: item}))
		}
	}
	if in.Rel != "" {
		return forRuns(r.s.Context(ctx, ContextInput{Item: item, Rel: in.Rel, Offset: in.Offset, Limit: in.Limit}))
	}
	return forRuns(r.s.Read(ctx, ReadInput{ID: item, Offset: in.Offset, Limit: in.Limit}))
}

func (r runs) Search(ctx context.Context, task string, in jobs.SearchInput) (any, error) {
	near := ""
	if task != "" {
		near = records.Handle("task", task)
	}
	return forRuns(r.s.Search(ctx, SearchInput{Query: in.Query, Kinds: in.Kinds, Near: near, Limit: in.Limit}))
}

// runHints are the bridge's tool names in its answers' hints, as a run's server names them: a
// run reads on with ensemble_context, which pages long text by offset and reads a skill by its
// handle as Read does.
var runHints = strings.NewReplacer("ensemble_read ", "ensemble_context item=", "ensemble_skills id=", "ensemble_context item=ensemble://skill/")

// forRuns is a bridge answer whose hints name the run's own tools.
func forRuns(out map[string]any, err error) (any, error) {
	if err != nil {
		return nil, err
	}
	b, err := json.Marshal(out)
	if err != nil {
		return nil, fmt.Errorf("workspace: a run's answer: %w", err)
	}
	return json.RawMessage(runHints.Replace(string(b))), nil
}
