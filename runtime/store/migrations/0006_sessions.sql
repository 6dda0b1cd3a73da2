-- Agent sessions are derived from runs (jobs.continues), not stored. What is stored: the sessions
-- deleted in Ensemble (never reopened), each automatic session choice with its candidates' signals
-- (to calibrate by scoring them again), and when the clean-up looks at a session next.

CREATE TABLE session_deletions (
	session_id    TEXT PRIMARY KEY,           -- the session's first run
	last_run      TEXT NOT NULL,              -- its newest run when it was deleted
	agent         TEXT NOT NULL,
	agent_session TEXT NOT NULL DEFAULT '',   -- the agent's own session id
	reason        TEXT NOT NULL CHECK (reason IN ('person', 'retired')),
	actor_kind    TEXT NOT NULL,
	-- Deleting the agent's own copy of the session: owed until an engine can do it.
	native        TEXT NOT NULL DEFAULT 'owed' CHECK (native IN ('owed', 'done', 'failed')),
	deleted_at    TEXT NOT NULL
) STRICT;

CREATE TABLE session_choices (
	id             TEXT PRIMARY KEY,
	run_id         TEXT NOT NULL,
	task_id        TEXT NOT NULL DEFAULT '',
	agent          TEXT NOT NULL,
	project_id     TEXT NOT NULL DEFAULT '',
	decision       TEXT NOT NULL CHECK (decision IN ('continue', 'new')),
	band           TEXT NOT NULL CHECK (band IN ('confident', 'unsure', 'low', 'none')),
	session_id     TEXT NOT NULL DEFAULT '',  -- the session continued, or the best candidate
	continued_run  TEXT NOT NULL DEFAULT '',  -- the run whose session was continued
	score          REAL NOT NULL DEFAULT 0,
	reason         TEXT NOT NULL DEFAULT '',
	note           TEXT NOT NULL DEFAULT '' CHECK (note IN ('', 'new-session', 'too-full', 'unavailable', 'disabled')),
	config_version TEXT NOT NULL,
	config_hash    TEXT NOT NULL,
	candidates     TEXT NOT NULL DEFAULT '[]', -- every candidate's signals, parts and score, best first (JSON)
	took_us        INTEGER NOT NULL DEFAULT 0,
	created_at     TEXT NOT NULL
) STRICT;

CREATE INDEX session_choices_run ON session_choices (run_id);

CREATE TABLE session_cleanup (
	session_id TEXT PRIMARY KEY,
	next_at    TEXT NOT NULL,                 -- not looked at again before this
	why        TEXT NOT NULL DEFAULT ''
) STRICT;
