-- Run profiles: an agent, a folder and run settings saved under a name, to assign with. The starred
-- one is the default (at most one: the partial unique index); without a star the first saved is.
-- name_key is the name in lower case, so names are unique whatever their case. settings is the
-- profile's settings as the assign request takes them (JSON; fields left out take the defaults).
CREATE TABLE run_profiles (
	id         TEXT PRIMARY KEY,
	name       TEXT NOT NULL,
	name_key   TEXT NOT NULL UNIQUE,
	agent      TEXT NOT NULL,
	folder     TEXT NOT NULL DEFAULT '',
	settings   TEXT NOT NULL DEFAULT '{}',
	starred    INTEGER NOT NULL DEFAULT 0,
	created_at TEXT NOT NULL,
	updated_at TEXT NOT NULL
) STRICT;

CREATE UNIQUE INDEX run_profiles_one_star ON run_profiles (starred) WHERE starred = 1;
