-- Browser sessions are bound to the port the runtime signed them in on, and scoped to a path of their
-- own (/s/<id>/), since cookies are not kept apart by port. Only the sessions the person chose to keep
-- ("Stay signed in") are kept here; the others end with the runtime. The sessions made before were
-- bound to no port and are dropped: their browsers sign in again.
DROP TABLE browser_sessions;
CREATE TABLE browser_sessions (
	id         TEXT PRIMARY KEY,     -- the path's id (not secret)
	hash       TEXT NOT NULL UNIQUE, -- SHA-256 of the cookie's secret; the secret is not kept
	port       INTEGER NOT NULL,
	created_at TEXT NOT NULL,
	expires_at TEXT NOT NULL
) STRICT;
