-- Phones paired through the relay. A phone holds a 256-bit device token in a __Host- cookie; only its
-- SHA-256 is kept here. Deleting the row signs the phone out: its next request gets 401. The one-time
-- pairing secrets a QR code carries live in the runtime's memory for five minutes and are never
-- written anywhere.
CREATE TABLE paired_devices (
	id           TEXT PRIMARY KEY,
	name         TEXT NOT NULL,
	hash         TEXT NOT NULL UNIQUE,
	created_at   TEXT NOT NULL,
	last_seen_at TEXT
) STRICT;
