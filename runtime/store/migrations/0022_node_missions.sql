-- Plans and missions (spec 002 §6.2–§6.3, §8.15). A mission is a validated plan (contract, the
-- node_plan input as completed by validatePlan); its card is the plan message message_id, whose
-- data is rebuilt from these tables on every change.
CREATE TABLE node_missions (
	id           TEXT PRIMARY KEY,
	room_id      TEXT NOT NULL REFERENCES node_rooms (id) ON DELETE CASCADE,
	lead_node_id TEXT NOT NULL REFERENCES node_agents (id) ON DELETE CASCADE,
	goal         TEXT NOT NULL,
	contract     TEXT NOT NULL DEFAULT '{}',
	state        TEXT NOT NULL DEFAULT 'running'
		CHECK (state IN ('running', 'reporting', 'succeeded', 'partially_completed', 'failed', 'stopped')),
	revision     INTEGER NOT NULL DEFAULT 1,
	message_id   TEXT NOT NULL DEFAULT '',
	by_owner     INTEGER NOT NULL DEFAULT 1 CHECK (by_owner IN (0, 1)),
	created_at   TEXT NOT NULL,
	updated_at   TEXT NOT NULL,
	ended_at     TEXT
) STRICT;

CREATE INDEX node_missions_room ON node_missions (room_id, created_at);

-- A step. status is its execution, outcome its result (missionscore.go); attempt is its current
-- attempt's number in node_attempts; held_by the steps holding it, or what held it when skipped.
CREATE TABLE node_steps (
	mission_id      TEXT NOT NULL REFERENCES node_missions (id) ON DELETE CASCADE,
	id              TEXT NOT NULL,
	position        INTEGER NOT NULL,
	node_id         TEXT NOT NULL REFERENCES node_agents (id) ON DELETE CASCADE,
	kind            TEXT NOT NULL CHECK (kind IN ('build', 'verify', 'write', 'research', 'other')),
	brief           TEXT NOT NULL,
	after           TEXT NOT NULL DEFAULT '[]',
	verifies        TEXT NOT NULL DEFAULT '',
	integrates      TEXT NOT NULL DEFAULT '[]',
	requirement_ids TEXT NOT NULL DEFAULT '[]',
	run             TEXT NOT NULL DEFAULT '{}',
	status          TEXT NOT NULL DEFAULT 'waiting'
		CHECK (status IN ('waiting', 'working', 'done', 'blocked', 'skipped', 'stopped')),
	outcome         TEXT NOT NULL DEFAULT 'unknown'
		CHECK (outcome IN ('unknown', 'done', 'pass', 'fail', 'blocked', 'unverified')),
	held_by         TEXT NOT NULL DEFAULT '[]',
	attempt         INTEGER NOT NULL DEFAULT 0,
	conversation_id TEXT NOT NULL DEFAULT '',
	updated_at      TEXT NOT NULL,
	PRIMARY KEY (mission_id, id)
) STRICT;

-- One attempt of a step: the first (reason start), a build reopened by its failed check (repair)
-- or a check run again on the repaired candidate (retest). tested is the candidate it was given,
-- candidate what it produced or tested; signature is a failed check's failureSignature. job_id
-- is the agent run a dispatched attempt started (its latest); failed_runs counts its failed runs
-- (failed_job the last one counted, so a run is counted once).
CREATE TABLE node_attempts (
	id           TEXT PRIMARY KEY,
	mission_id   TEXT NOT NULL REFERENCES node_missions (id) ON DELETE CASCADE,
	step_id      TEXT NOT NULL,
	n            INTEGER NOT NULL,
	reason       TEXT NOT NULL CHECK (reason IN ('start', 'repair', 'retest')),
	note         TEXT NOT NULL DEFAULT '',
	tested       TEXT NOT NULL DEFAULT '',
	outcome      TEXT NOT NULL DEFAULT 'unknown'
		CHECK (outcome IN ('unknown', 'done', 'pass', 'fail', 'blocked', 'unverified')),
	report       TEXT NOT NULL DEFAULT '',
	candidate    TEXT NOT NULL DEFAULT '',
	signature    TEXT NOT NULL DEFAULT '',
	job_id       TEXT NOT NULL DEFAULT '',
	failed_runs  INTEGER NOT NULL DEFAULT 0,
	failed_job   TEXT NOT NULL DEFAULT '',
	report_asked INTEGER NOT NULL DEFAULT 0 CHECK (report_asked IN (0, 1)),
	created_at   TEXT NOT NULL,
	ended_at     TEXT,
	UNIQUE (mission_id, step_id, n)
) STRICT;

CREATE INDEX node_attempts_job ON node_attempts (job_id) WHERE job_id != '';

-- A mission's effects, written in the transaction that decided them and delivered after it
-- commits (and by a sweep): operation_id is the effect's once-only key, carried by the turn or
-- run it starts.
CREATE TABLE node_outbox (
	id           TEXT PRIMARY KEY,
	mission_id   TEXT NOT NULL REFERENCES node_missions (id) ON DELETE CASCADE,
	kind         TEXT NOT NULL CHECK (kind IN ('start_step', 'report', 'judge', 'ask_owner')),
	payload      TEXT NOT NULL DEFAULT '{}',
	operation_id TEXT NOT NULL UNIQUE,
	tries        INTEGER NOT NULL DEFAULT 0,
	error        TEXT NOT NULL DEFAULT '',
	created_at   TEXT NOT NULL,
	delivered_at TEXT
) STRICT;

CREATE INDEX node_outbox_pending ON node_outbox (created_at) WHERE delivered_at IS NULL;

-- A step's place on a computer (spec 002 §8.15): a folder's checkout, a build's worktree or a
-- development-server port (4300–4399). key is <device>:<resource>; one holder at a time.
CREATE TABLE node_claims (
	key        TEXT PRIMARY KEY,
	kind       TEXT NOT NULL CHECK (kind IN ('checkout', 'worktree', 'port')),
	mission_id TEXT NOT NULL REFERENCES node_missions (id) ON DELETE CASCADE,
	step_id    TEXT NOT NULL,
	port       INTEGER,
	created_at TEXT NOT NULL
) STRICT;
