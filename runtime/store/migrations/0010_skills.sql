-- The person's personal skills: instructions they saved for the assistant. The instructions name
-- each skill by name and title; the model reads its body with hub_read_skill when one applies.
-- name is the skill's key (lowercase letters, digits and dashes), so saving a name again replaces it.
CREATE TABLE skills (
	name       TEXT PRIMARY KEY,
	title      TEXT NOT NULL,
	body       TEXT NOT NULL,
	updated_at TEXT NOT NULL
) STRICT;
