-- Secrets kept on this computer: model-provider keys and the secrets runs use. ciphertext is the value
-- sealed with the runtime's local key (secret.key in the data folder, never in this file), so this
-- database, its WAL and its backups never hold a value in the clear. allow is a JSON list of the
-- origins a run secret may be sent to (empty for provider keys and environment-only secrets).
CREATE TABLE secrets (
	name       TEXT PRIMARY KEY,
	kind       TEXT NOT NULL CHECK (kind IN ('provider', 'run')),
	ciphertext BLOB NOT NULL,
	allow      TEXT NOT NULL DEFAULT '[]',
	created_at TEXT NOT NULL,
	updated_at TEXT NOT NULL
) STRICT;

-- The nonces of sealed boxes already opened, so a box is taken once. A row is kept until its box's
-- expiry: after that the box is refused as expired anyway, and the row is deleted.
CREATE TABLE secret_seal_seen (
	nonce      TEXT PRIMARY KEY,
	expires_at TEXT NOT NULL
) STRICT;
