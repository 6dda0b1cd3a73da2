-- Routines (spec 002 §6.5): work a node does by itself on a schedule, when tasks or pages change,
-- or when a webhook calls.

-- A routine. trigger is schedule, event or webhook; cron and timezone belong to a schedule,
-- event_on, event_space and window_seconds to an event (window_seconds also gathers a webhook's
-- calls). room_id is where it reports: NULL is the node's DM. token_hash is the SHA-256 (hex) of
-- a webhook's token, never the token. checked_at is how far the tick has recorded its times.
CREATE TABLE node_routines (
	id             TEXT PRIMARY KEY,
	node_id        TEXT NOT NULL REFERENCES node_agents (id) ON DELETE CASCADE,
	title          TEXT NOT NULL,
	instruction    TEXT NOT NULL,
	trigger        TEXT NOT NULL CHECK (trigger IN ('schedule', 'event', 'webhook')),
	cron           TEXT NOT NULL DEFAULT '',
	timezone       TEXT NOT NULL DEFAULT '',
	event_on       TEXT NOT NULL DEFAULT '' CHECK (event_on IN ('', 'task', 'page')),
	event_space    TEXT NOT NULL DEFAULT '',
	window_seconds INTEGER NOT NULL DEFAULT 0,
	notify         TEXT NOT NULL DEFAULT 'always' CHECK (notify IN ('always', 'needed', 'never')),
	room_id        TEXT REFERENCES node_rooms (id) ON DELETE SET NULL,
	status         TEXT NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'paused')),
	token_hash     TEXT NOT NULL DEFAULT '',
	checked_at     TEXT NOT NULL,
	created_at     TEXT NOT NULL,
	updated_at     TEXT NOT NULL
) STRICT;

CREATE INDEX node_routines_node ON node_routines (node_id);

-- An occurrence of a routine. key is unique per routine (at:<time>, event:<window>,
-- hook:<window>, manual:<id>), so a restart records and starts it once. status: gathering (an
-- event or webhook window still open), waiting (due, behind a run still going), started, done,
-- failed, missed (its time passed by over an hour while Ensemble was not running), skipped.
-- changes lists what happened (at most 50); turn_id is the work turn that ran it.
CREATE TABLE node_routine_runs (
	id         TEXT PRIMARY KEY,
	routine_id TEXT NOT NULL REFERENCES node_routines (id) ON DELETE CASCADE,
	key        TEXT NOT NULL,
	status     TEXT NOT NULL CHECK (status IN ('gathering', 'waiting', 'started', 'done', 'failed', 'missed', 'skipped')),
	due_at     TEXT NOT NULL,
	changes    TEXT NOT NULL DEFAULT '[]',
	turn_id    TEXT NOT NULL DEFAULT '',
	result     TEXT NOT NULL DEFAULT '',
	error      TEXT NOT NULL DEFAULT '',
	created_at TEXT NOT NULL,
	started_at TEXT,
	ended_at   TEXT,
	UNIQUE (routine_id, key)
) STRICT;

CREATE INDEX node_routine_runs_status ON node_routine_runs (status, due_at);

-- A webhook delivery seen: the same delivery id within a day starts nothing.
CREATE TABLE node_hook_deliveries (
	id          TEXT PRIMARY KEY,
	routine_id  TEXT NOT NULL REFERENCES node_routines (id) ON DELETE CASCADE,
	delivery_id TEXT NOT NULL,
	run_id      TEXT NOT NULL DEFAULT '',
	received_at TEXT NOT NULL,
	UNIQUE (routine_id, delivery_id)
) STRICT;
