-- Ensemble Node (spec 002): the person's nodes, their rooms and messages, the durable turn queue
-- and each node's memory. Everything here is one person's: the runtime has exactly one owner.

-- A node. slug is its handle (unique); name is unique ignoring case. charter_edited says the
-- person wrote the charter: an unedited one follows its template's current text. A helper has
-- parent_node_id set and is not listed or counted.
CREATE TABLE node_agents (
	id             TEXT PRIMARY KEY,
	name           TEXT NOT NULL,
	slug           TEXT NOT NULL UNIQUE,
	role           TEXT NOT NULL DEFAULT 'assistant',
	template_id    TEXT NOT NULL DEFAULT '',
	charter        TEXT NOT NULL DEFAULT '',
	charter_edited INTEGER NOT NULL DEFAULT 0 CHECK (charter_edited IN (0, 1)),
	avatar         TEXT NOT NULL DEFAULT '{}',
	provider       TEXT NOT NULL DEFAULT '',
	model          TEXT NOT NULL DEFAULT '',
	effort         TEXT NOT NULL DEFAULT '',
	status         TEXT NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'paused')),
	autonomy       TEXT NOT NULL DEFAULT '{}',
	parent_node_id TEXT REFERENCES node_agents (id) ON DELETE CASCADE,
	created_at     TEXT NOT NULL,
	updated_at     TEXT NOT NULL
) STRICT;

CREATE UNIQUE INDEX node_agents_name ON node_agents (lower(name)) WHERE parent_node_id IS NULL;

-- A room: a node's DM, a crew of nodes, or a helper's task room. read_seq is the person's read
-- marker; next_seq numbers the room's messages.
CREATE TABLE node_rooms (
	id           TEXT PRIMARY KEY,
	kind         TEXT NOT NULL CHECK (kind IN ('dm', 'crew', 'task')),
	title        TEXT NOT NULL,
	dm_node_id   TEXT REFERENCES node_agents (id) ON DELETE CASCADE,
	lead_node_id TEXT REFERENCES node_agents (id) ON DELETE SET NULL,
	settings     TEXT NOT NULL DEFAULT '{}',
	read_seq     INTEGER NOT NULL DEFAULT 0,
	next_seq     INTEGER NOT NULL DEFAULT 1,
	created_at   TEXT NOT NULL,
	updated_at   TEXT NOT NULL
) STRICT;

CREATE UNIQUE INDEX node_rooms_crew_title ON node_rooms (lower(title)) WHERE kind = 'crew';
CREATE UNIQUE INDEX node_rooms_dm ON node_rooms (dm_node_id) WHERE kind = 'dm';

-- A node in a room, with its two threads (spec 002 §5.2): each has its own assistant
-- conversation and read cursor, so nothing said privately reaches a shared reply.
CREATE TABLE node_room_members (
	room_id                 TEXT NOT NULL REFERENCES node_rooms (id) ON DELETE CASCADE,
	node_id                 TEXT NOT NULL REFERENCES node_agents (id) ON DELETE CASCADE,
	conversation_id         TEXT NOT NULL DEFAULT '',
	seen_seq                INTEGER NOT NULL DEFAULT 0,
	private_conversation_id TEXT NOT NULL DEFAULT '',
	private_seen_seq        INTEGER NOT NULL DEFAULT 0,
	joined_at               TEXT NOT NULL,
	PRIMARY KEY (room_id, node_id)
) STRICT;

-- A message. author is 'person', 'node' (author_node_id) or 'system'. visible_to is a JSON list:
-- empty for the whole room, ["owner"] for Only me. depth is the chain depth under the person's
-- message it descends from (the brakes); client_id makes a resend return the first copy.
CREATE TABLE node_messages (
	id             TEXT PRIMARY KEY,
	room_id        TEXT NOT NULL REFERENCES node_rooms (id) ON DELETE CASCADE,
	seq            INTEGER NOT NULL,
	author         TEXT NOT NULL CHECK (author IN ('person', 'node', 'system')),
	author_node_id TEXT,
	kind           TEXT NOT NULL CHECK (kind IN ('text', 'approval', 'run', 'plan', 'status', 'request', 'error')),
	body           TEXT NOT NULL DEFAULT '',
	data           TEXT NOT NULL DEFAULT '{}',
	visible_to     TEXT NOT NULL DEFAULT '[]',
	reply_to_id    TEXT,
	client_id      TEXT,
	depth          INTEGER NOT NULL DEFAULT 0,
	turn_id        TEXT,
	deleted        INTEGER NOT NULL DEFAULT 0 CHECK (deleted IN (0, 1)),
	created_at     TEXT NOT NULL,
	updated_at     TEXT NOT NULL,
	UNIQUE (room_id, seq)
) STRICT;

CREATE UNIQUE INDEX node_messages_client ON node_messages (room_id, client_id) WHERE client_id IS NOT NULL;
CREATE INDEX node_messages_pending_cards ON node_messages (kind, room_id) WHERE kind = 'approval';

-- The durable turn queue (spec 002 §5.1). One row per turn; lane orders them. A turn is queued,
-- running, then done, failed, aborted, parked, stopped or dropped. operation_id is unique, so a
-- wake delivered twice starts one turn. acted_at is set when the turn first ran a tool that acts
-- (the assistant loop's write or any node tool but a look-up): a turn cut off before it reruns,
-- one cut off after resumes in a new turn (origin_turn_id) with a note of its receipts.
CREATE TABLE node_turns (
	id                 TEXT PRIMARY KEY,
	node_id            TEXT NOT NULL REFERENCES node_agents (id) ON DELETE CASCADE,
	room_id            TEXT NOT NULL REFERENCES node_rooms (id) ON DELETE CASCADE,
	lane               TEXT NOT NULL,
	private            INTEGER NOT NULL DEFAULT 0 CHECK (private IN (0, 1)),
	reason             TEXT NOT NULL,
	status             TEXT NOT NULL CHECK (status IN ('queued', 'running', 'done', 'failed', 'aborted', 'parked', 'stopped', 'dropped')),
	by_owner           INTEGER NOT NULL DEFAULT 1 CHECK (by_owner IN (0, 1)),
	message_id         TEXT,
	upto_seq           INTEGER NOT NULL DEFAULT 0,
	depth              INTEGER NOT NULL DEFAULT 0,
	operation_id       TEXT UNIQUE,
	origin_turn_id     TEXT,
	attempt            INTEGER NOT NULL DEFAULT 0,
	note               TEXT NOT NULL DEFAULT '',
	receipts           TEXT NOT NULL DEFAULT '[]',
	acted_at           TEXT,
	run_after          TEXT NOT NULL,
	error              TEXT NOT NULL DEFAULT '',
	-- a work turn's own assistant conversation (a conversation turn uses its thread's)
	conversation_id    TEXT NOT NULL DEFAULT '',
	-- a delegated work turn's report goes to this turn's node and lane (JSON: Report)
	report_to          TEXT NOT NULL DEFAULT '',
	created_at         TEXT NOT NULL,
	started_at         TEXT,
	ended_at           TEXT
) STRICT;

CREATE INDEX node_turns_queue ON node_turns (status, lane, created_at);
CREATE INDEX node_turns_node ON node_turns (node_id, status);

-- A node's memory: short facts the person's own turns kept (node_remember), newest 200 per node.
CREATE TABLE node_memories (
	id         TEXT PRIMARY KEY,
	node_id    TEXT NOT NULL REFERENCES node_agents (id) ON DELETE CASCADE,
	content    TEXT NOT NULL,
	created_at TEXT NOT NULL
) STRICT;

CREATE INDEX node_memories_node ON node_memories (node_id, created_at);

-- Assistant conversations a node's turns keep are not the person's chats (started_on 'node'),
-- and their writes are the node's (actor: the ledger actor as JSON; '' for the assistant).
ALTER TABLE assistant_conversations ADD COLUMN started_on TEXT NOT NULL DEFAULT 'hub';
ALTER TABLE assistant_conversations ADD COLUMN actor TEXT NOT NULL DEFAULT '';
