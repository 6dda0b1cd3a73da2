-- The assistant's conversations. A conversation row is written when its first turn begins, with the
-- person's message, so a crash mid-turn still leaves the question saved; the assistant's message is
-- written when the turn ends, whether it answered, failed or was stopped. Deleting a conversation
-- deletes its messages (the person asked for them to be gone).
CREATE TABLE assistant_conversations (
	id         TEXT PRIMARY KEY,
	title      TEXT NOT NULL DEFAULT '',      -- the first message, one line, at most 80 characters
	created_at TEXT NOT NULL,
	updated_at TEXT NOT NULL
) STRICT;

CREATE INDEX assistant_conversations_updated ON assistant_conversations (updated_at);

-- One message of a conversation. history is what the model is sent in later turns when it differs
-- from text (a reply with the records its writes touched); '' means text. An error message is shown
-- but never sent as history; a stopped one keeps the text streamed before Stop.
CREATE TABLE assistant_messages (
	id              TEXT PRIMARY KEY,
	conversation_id TEXT NOT NULL REFERENCES assistant_conversations (id) ON DELETE CASCADE,
	seq             INTEGER NOT NULL,
	role            TEXT NOT NULL CHECK (role IN ('user', 'assistant')),
	text            TEXT NOT NULL DEFAULT '',
	history         TEXT NOT NULL DEFAULT '',
	error           INTEGER NOT NULL DEFAULT 0 CHECK (error IN (0, 1)),
	stopped         INTEGER NOT NULL DEFAULT 0 CHECK (stopped IN (0, 1)),
	tools           TEXT NOT NULL DEFAULT '[]', -- the turn's tool rows (JSON)
	created_at      TEXT NOT NULL,
	UNIQUE (conversation_id, seq)
) STRICT;

-- The assistant's settings, one row per key: provider, model, baseUrl, effort, writePolicy.
CREATE TABLE assistant_settings (
	key   TEXT PRIMARY KEY,
	value TEXT NOT NULL
) STRICT;
