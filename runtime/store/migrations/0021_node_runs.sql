-- Agent runs a node started and the sessions it drives (spec 002 §8). A session is a chain of
-- runs continuing each other, named by its first run's job id (session_root). A message sent to a
-- busy session waits here, state queued, in the session's own queue (position), until the run
-- before it ends; it then becomes a job (job_id) continuing the run that actually ran last.
CREATE TABLE node_runs (
    id TEXT PRIMARY KEY,             -- nrn_…
    job_id TEXT UNIQUE,              -- its job, once made
    node_id TEXT NOT NULL,           -- the node that asked for it (it hears the run's end)
    room_id TEXT NOT NULL,
    lane TEXT NOT NULL,              -- the lane it was asked from, where its end wakes the node
    private INTEGER NOT NULL DEFAULT 0,
    by_owner INTEGER NOT NULL DEFAULT 0,
    turn_id TEXT NOT NULL DEFAULT '',
    session_root TEXT NOT NULL,      -- the session's first run's job id
    title TEXT NOT NULL,
    prompt TEXT NOT NULL,
    state TEXT NOT NULL CHECK (state IN ('queued', 'started', 'cancelled', 'failed')),
    position INTEGER NOT NULL DEFAULT 0,
    error TEXT NOT NULL DEFAULT '',
    card_message_id TEXT,
    settings TEXT NOT NULL DEFAULT '{}', -- {requested, resolved, observed}
    quiet INTEGER NOT NULL DEFAULT 0,    -- taken over by a steer, replace or stop: its end wakes nobody
    ended_notified TEXT,                 -- the operation id of the wake for its end, once handled
    watchdog TEXT NOT NULL DEFAULT '{}', -- the watchdog's findings already raised, by rule
    created_at TEXT NOT NULL
) STRICT;
CREATE INDEX node_runs_session ON node_runs (session_root, state, position);
CREATE INDEX node_runs_node ON node_runs (node_id, created_at);

-- What happened to a session (spec 002 §8.9, the work board), and who it belongs to: the node of
-- its first run, or of its latest adopt.
CREATE TABLE node_session_events (
    id TEXT PRIMARY KEY,
    session_root TEXT NOT NULL,
    node_id TEXT NOT NULL,
    kind TEXT NOT NULL CHECK (kind IN ('queue', 'steer', 'replace', 'stop', 'reorder', 'cancel', 'answer', 'attention', 'adopt', 'delete')),
    who TEXT NOT NULL CHECK (who IN ('owner', 'node', 'watchdog')),
    source TEXT NOT NULL CHECK (source IN ('card', 'chat', 'watchdog')),
    run_id TEXT NOT NULL DEFAULT '',
    detail TEXT NOT NULL DEFAULT '',
    created_at TEXT NOT NULL
) STRICT;
CREATE INDEX node_session_events_root ON node_session_events (session_root, created_at);
