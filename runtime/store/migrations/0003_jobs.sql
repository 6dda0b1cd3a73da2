-- Runs of the person's coding agents (jobs) and their settings. A run's trace and progress are
-- events (kinds run.*, subject the job id) in the events table; the index below replays one run's.

CREATE TABLE jobs (
	id           TEXT PRIMARY KEY,
	task_id      TEXT NOT NULL,              -- no foreign key: undoing the task's creation must not fail
	agent        TEXT NOT NULL,
	brief        TEXT NOT NULL,
	status       TEXT NOT NULL CHECK (status IN
	             ('queued', 'running', 'paused', 'done', 'failed', 'stopped', 'stuck', 'limit', 'interrupted')),
	folder_kind  TEXT NOT NULL CHECK (folder_kind IN ('folder', 'worktree', 'workspace', 'clone', 'project')),
	folder       TEXT NOT NULL DEFAULT '',   -- the folder named at assignment ('' for the workspace; the URL of a clone; the project's id)
	work_dir     TEXT NOT NULL DEFAULT '',   -- where the agent works, once prepared
	branch       TEXT NOT NULL DEFAULT '',   -- the worktree's branch
	resource_key TEXT NOT NULL,              -- one run at a time per key
	session_id   TEXT NOT NULL DEFAULT '',   -- the agent's session, to carry on
	continues    TEXT NOT NULL DEFAULT '',   -- the earlier run whose session this one continues
	resume       TEXT NOT NULL DEFAULT '',   -- that run's session, resumed at the first start
	model        TEXT NOT NULL DEFAULT '',   -- as the agent reported it
	summary      TEXT NOT NULL DEFAULT '',   -- the agent's final reply, trimmed
	report       TEXT NOT NULL DEFAULT '',   -- the agent's own report (report_result), JSON
	base_commit  TEXT NOT NULL DEFAULT '',   -- the work folder's HEAD when the run first started
	changes      TEXT NOT NULL DEFAULT '[]', -- the files the run changed, with line counts (JSON)
	error        TEXT NOT NULL DEFAULT '',   -- why it ended, when it did not finish
	usage        TEXT NOT NULL DEFAULT '{}', -- engines.Usage as JSON
	turns        INTEGER NOT NULL DEFAULT 0,
	steps        INTEGER NOT NULL DEFAULT 0, -- tool calls recorded in the trace
	attempts     INTEGER NOT NULL DEFAULT 0, -- engine starts, retries included
	kept         TEXT NOT NULL DEFAULT '{}', -- judge.Kept: answers "for this run"
	created_at   TEXT NOT NULL,
	started_at   TEXT,                       -- set once, when the queue first started it
	ended_at     TEXT,
	updated_at   TEXT NOT NULL
) STRICT;

CREATE INDEX jobs_task ON jobs (task_id, created_at);
CREATE INDEX jobs_status ON jobs (status, created_at);

CREATE TABLE job_settings (
	job_id            TEXT PRIMARY KEY REFERENCES jobs(id),
	mode              TEXT NOT NULL CHECK (mode IN ('ask', 'review', 'unattended')),
	trusted           INTEGER NOT NULL DEFAULT 0,
	sandbox           INTEGER NOT NULL DEFAULT 1,
	outside           TEXT NOT NULL CHECK (outside IN ('none', 'read', 'readwrite')),
	git               TEXT NOT NULL CHECK (git IN ('local', 'commit', 'any')),
	ask_before_commit INTEGER NOT NULL DEFAULT 0,
	internet          INTEGER NOT NULL DEFAULT 1,
	max_minutes       INTEGER NOT NULL DEFAULT 0,
	max_turns         INTEGER NOT NULL DEFAULT 0,
	model             TEXT NOT NULL DEFAULT '',
	effort            TEXT NOT NULL DEFAULT ''
) STRICT;

CREATE INDEX events_subject ON events (subject, seq);
