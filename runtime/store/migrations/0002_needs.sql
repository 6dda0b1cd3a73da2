-- Needs me: the decisions the person answers once. A row is a permission (a tool call the judge asked
-- about: call, touches, reason) or a question (question, with free text or not). Both have options
-- (a JSON array of labels) and the index of the recommended one (-1: none). A row is open until it is
-- answered (answer_option is the option's index, -1 for free text; answer_text the option's label or
-- the typed text), withdrawn (its run ended) or expired (no one waits for the answer any more).
-- Settling is a compare-and-set on status = 'open', so the first answer wins.
CREATE TABLE decisions (
	id            TEXT PRIMARY KEY,
	kind          TEXT NOT NULL CHECK (kind IN ('permission', 'question')),
	run_id        TEXT NOT NULL DEFAULT '',
	title         TEXT NOT NULL DEFAULT '',
	question      TEXT NOT NULL DEFAULT '',
	call          TEXT NOT NULL DEFAULT '',
	touches       TEXT NOT NULL DEFAULT '{}',
	reason        TEXT NOT NULL DEFAULT '',
	options       TEXT NOT NULL DEFAULT '[]',
	recommended   INTEGER NOT NULL DEFAULT -1,
	free_text     INTEGER NOT NULL DEFAULT 0 CHECK (free_text IN (0, 1)),
	created_at    TEXT NOT NULL,
	status        TEXT NOT NULL DEFAULT 'open' CHECK (status IN ('open', 'answered', 'withdrawn', 'expired')),
	answer_option INTEGER,
	answer_text   TEXT,
	answered_by   TEXT,
	answered_at   TEXT,
	closed_at     TEXT,
	CHECK ((status = 'answered') = (answered_at IS NOT NULL))
) STRICT;

CREATE INDEX decisions_status ON decisions (status, created_at);
CREATE INDEX decisions_run ON decisions (run_id, status);
