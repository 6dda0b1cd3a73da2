-- The first schema: spaces and their records, the ledger with Undo groups, the event log and browser
-- sessions. Timestamps are RFC 3339 text in UTC; lists are JSON arrays in text columns.

CREATE TABLE spaces (
	id         TEXT PRIMARY KEY,
	name       TEXT NOT NULL,
	kind       TEXT NOT NULL CHECK (kind IN ('personal', 'shared')),
	created_at TEXT NOT NULL
) STRICT;

INSERT INTO spaces (id, name, kind, created_at)
VALUES ('spc_personal', 'Personal', 'personal', strftime('%Y-%m-%dT%H:%M:%fZ', 'now'));

CREATE TABLE projects (
	id         TEXT PRIMARY KEY,
	space_id   TEXT NOT NULL REFERENCES spaces(id),
	name       TEXT NOT NULL,
	summary    TEXT NOT NULL DEFAULT '',
	status     TEXT NOT NULL DEFAULT 'active',
	notes      TEXT NOT NULL DEFAULT '',
	created_at TEXT NOT NULL,
	updated_at TEXT NOT NULL,
	deleted_at TEXT
) STRICT;

CREATE TABLE people (
	id           TEXT PRIMARY KEY,
	space_id     TEXT NOT NULL REFERENCES spaces(id),
	name         TEXT NOT NULL,
	email        TEXT NOT NULL DEFAULT '',
	role         TEXT NOT NULL DEFAULT '',
	team         TEXT NOT NULL DEFAULT '',
	relationship TEXT NOT NULL DEFAULT '',
	notes        TEXT NOT NULL DEFAULT '',
	created_at   TEXT NOT NULL,
	updated_at   TEXT NOT NULL,
	deleted_at   TEXT
) STRICT;

CREATE TABLE repos (
	id             TEXT PRIMARY KEY,
	space_id       TEXT NOT NULL REFERENCES spaces(id),
	name           TEXT NOT NULL,
	url            TEXT NOT NULL DEFAULT '',
	path           TEXT NOT NULL DEFAULT '',
	default_branch TEXT NOT NULL DEFAULT '',
	created_at     TEXT NOT NULL,
	updated_at     TEXT NOT NULL,
	deleted_at     TEXT
) STRICT;

CREATE TABLE tasks (
	id         TEXT PRIMARY KEY,
	space_id   TEXT NOT NULL REFERENCES spaces(id),
	project_id TEXT REFERENCES projects(id),
	title      TEXT NOT NULL,
	status     TEXT NOT NULL CHECK (status IN
	           ('proposed', 'todo', 'in_progress', 'waiting_approval', 'blocked', 'done', 'dropped')),
	priority   TEXT NOT NULL DEFAULT 'none' CHECK (priority IN ('none', 'low', 'medium', 'high', 'urgent')),
	due        TEXT,
	labels     TEXT NOT NULL DEFAULT '[]',
	owner_id   TEXT REFERENCES people(id),
	people     TEXT NOT NULL DEFAULT '[]',
	repo_id    TEXT REFERENCES repos(id),
	page       TEXT NOT NULL DEFAULT '',
	position   REAL NOT NULL DEFAULT 0,
	created_at TEXT NOT NULL,
	updated_at TEXT NOT NULL,
	deleted_at TEXT
) STRICT;

CREATE INDEX tasks_space_status ON tasks (space_id, deleted_at, status, position);

CREATE TABLE pages (
	id         TEXT PRIMARY KEY,
	space_id   TEXT NOT NULL REFERENCES spaces(id),
	parent_id  TEXT REFERENCES pages(id),
	title      TEXT NOT NULL,
	body       TEXT NOT NULL DEFAULT '',
	created_at TEXT NOT NULL,
	updated_at TEXT NOT NULL,
	deleted_at TEXT
) STRICT;

-- One row per write the person could undo, made in the same transaction as the write. seq orders
-- every ledger operation (writes, undos, redos); undone_seq is the seq of the undo that reversed it.
CREATE TABLE ledger_groups (
	id         TEXT PRIMARY KEY,
	seq        INTEGER NOT NULL UNIQUE,
	kind       TEXT NOT NULL CHECK (kind IN ('write', 'undo', 'redo')),
	target     TEXT REFERENCES ledger_groups(id),
	actor_kind TEXT NOT NULL,
	actor_id   TEXT NOT NULL DEFAULT '',
	actor_name TEXT NOT NULL DEFAULT '',
	summary    TEXT NOT NULL,
	at         TEXT NOT NULL,
	state      TEXT NOT NULL DEFAULT 'done' CHECK (state IN ('done', 'undone')),
	undone_seq INTEGER
) STRICT;

CREATE INDEX ledger_groups_kind_state ON ledger_groups (kind, state, seq);

-- Row images before and after each change, in order. NULL before means the row was created; NULL
-- after means it was removed.
CREATE TABLE ledger_changes (
	group_id  TEXT NOT NULL REFERENCES ledger_groups(id),
	n         INTEGER NOT NULL,
	tbl       TEXT NOT NULL,
	row_id    TEXT NOT NULL,
	before    TEXT,
	after     TEXT,
	PRIMARY KEY (group_id, n)
) STRICT;

CREATE INDEX ledger_changes_row ON ledger_changes (tbl, row_id);

CREATE TABLE events (
	seq     INTEGER PRIMARY KEY AUTOINCREMENT,
	at      TEXT NOT NULL,
	kind    TEXT NOT NULL,
	subject TEXT NOT NULL DEFAULT '',
	data    TEXT NOT NULL
) STRICT;

-- Browser sign-ins made with a one-time link. Only a hash of the cookie is kept.
CREATE TABLE browser_sessions (
	hash       TEXT PRIMARY KEY,
	created_at TEXT NOT NULL,
	expires_at TEXT NOT NULL
) STRICT;
