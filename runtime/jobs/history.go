package jobs

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"time"

	"github.com/ensemblework/ensemble/runtime/events"
	"github.com/ensemblework/ensemble/runtime/store"
)

// What other packages read of the runs, so that only this package names the jobs tables: agent
// sessions (runtime/sessions) are derived from them. The functions take a reader or a
// transaction, so a caller reads inside its own write when it must.

// RunLine is a run as sessions are derived from it.
type RunLine struct {
	ID, TaskID, Agent string
	Status            Status
	WorkDir           string
	FolderKind        string
	SessionID         string // the agent's own session id; "" before it has one
	Continues         string // the run whose session it continues
	Model             string // the model it used, or else the one its settings asked for
	Summary, Changes  string
	CreatedAt         time.Time
	ActiveAt          time.Time // when it ended, started or was made, the latest it has
	EndedAt           *time.Time
}

// RunLines reads every run, oldest first.
func RunLines(ctx context.Context, q events.Querier) ([]RunLine, error) {
	rows, err := q.QueryContext(ctx, `SELECT j.id, j.task_id, j.agent, j.status, j.work_dir, j.folder_kind,
		j.session_id, j.continues, CASE WHEN j.model != '' THEN j.model ELSE s.model END, j.summary,
		j.changes, j.created_at, coalesce(j.ended_at, j.started_at, j.created_at), j.ended_at
		FROM jobs j JOIN job_settings s ON s.job_id = j.id ORDER BY j.created_at, j.id`)
	if err != nil {
		return nil, fmt.Errorf("jobs: read runs: %w", err)
	}
	defer rows.Close()
	var out []RunLine
	for rows.Next() {
		var r RunLine
		var created, active string
		var ended sql.NullString
		if err := rows.Scan(&r.ID, &r.TaskID, &r.Agent, &r.Status, &r.WorkDir, &r.FolderKind, &r.SessionID, &r.Continues,
			&r.Model, &r.Summary, &r.Changes, &created, &active, &ended); err != nil {
			return nil, fmt.Errorf("jobs: read runs: %w", err)
		}
		r.CreatedAt, r.ActiveAt = store.ReadTime(created), store.ReadTime(active)
		if ended.Valid {
			t := store.ReadTime(ended.String)
			r.EndedAt = &t
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("jobs: read runs: %w", err)
	}
	return out, nil
}

// Briefs reads the first chars characters of the briefs of the runs with ids.
func Briefs(ctx context.Context, q events.Querier, ids []string, chars int) ([]string, error) {
	rows, err := q.QueryContext(ctx, `SELECT substr(brief, 1, ?) FROM jobs WHERE id IN (SELECT value FROM json_each(?))`, chars, idList(ids))
	if err != nil {
		return nil, fmt.Errorf("jobs: read briefs: %w", err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var b string
		if rows.Scan(&b) == nil {
			out = append(out, b)
		}
	}
	return out, rows.Err()
}

// Continuing counts the runs of agent that continue one of the runs ids and are not among them.
func Continuing(ctx context.Context, q events.Querier, ids []string, agent string) (int, error) {
	var n int
	list := idList(ids)
	err := q.QueryRowContext(ctx, `SELECT count(*) FROM jobs WHERE continues IN (SELECT value FROM json_each(?1))
		AND id NOT IN (SELECT value FROM json_each(?1)) AND agent = ?2`, list, agent).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("jobs: count continuing runs: %w", err)
	}
	return n, nil
}

// RunTask is a run's status and its task.
type RunTask struct {
	ID     string
	Status Status
	TaskID string
}

// RunTasks reads the status and task of each run with ids that exists.
func RunTasks(ctx context.Context, q events.Querier, ids []string) ([]RunTask, error) {
	rows, err := q.QueryContext(ctx, `SELECT id, status, task_id FROM jobs WHERE id IN (SELECT value FROM json_each(?))`, idList(ids))
	if err != nil {
		return nil, fmt.Errorf("jobs: read runs' tasks: %w", err)
	}
	defer rows.Close()
	var out []RunTask
	for rows.Next() {
		var r RunTask
		if err := rows.Scan(&r.ID, &r.Status, &r.TaskID); err != nil {
			return nil, fmt.Errorf("jobs: read runs' tasks: %w", err)
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// WorkDirs reads the folder each run with ids worked in, by run id; a run that does not exist is
// left out.
func WorkDirs(ctx context.Context, q events.Querier, ids []string) (map[string]string, error) {
	rows, err := q.QueryContext(ctx, `SELECT id, work_dir FROM jobs WHERE id IN (SELECT value FROM json_each(?))`, idList(ids))
	if err != nil {
		return nil, fmt.Errorf("jobs: read runs' folders: %w", err)
	}
	defer rows.Close()
	out := map[string]string{}
	for rows.Next() {
		var id, dir string
		if err := rows.Scan(&id, &dir); err != nil {
			return nil, fmt.Errorf("jobs: read runs' folders: %w", err)
		}
		out[id] = dir
	}
	return out, rows.Err()
}

func idList(ids []string) string {
	b, _ := json.Marshal(ids)
	return string(b)
}
