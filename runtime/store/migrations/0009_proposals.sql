-- Writes the assistant proposed and holds for the person's Apply (write policy preview or needs-me,
-- or a tool that always waits). A proposal is applied at most once: Apply sets it 'applied' in the
-- same transaction as the write, so two Applies, or a crash after the write, never run it twice.
-- result is the applied write's receipt (JSON: summary, refs, group); error the last failed
-- Apply's sentence.
CREATE TABLE assistant_proposals (
	id              TEXT PRIMARY KEY,
	conversation_id TEXT NOT NULL REFERENCES assistant_conversations (id) ON DELETE CASCADE,
	call_id         TEXT NOT NULL,
	tool            TEXT NOT NULL,
	input           TEXT NOT NULL,
	preview         TEXT NOT NULL,
	policy          TEXT NOT NULL CHECK (policy IN ('preview', 'needs-me', 'always')),
	status          TEXT NOT NULL CHECK (status IN ('proposed', 'applied', 'failed', 'discarded')),
	error           TEXT NOT NULL DEFAULT '',
	result          TEXT NOT NULL DEFAULT '',
	created_at      TEXT NOT NULL,
	updated_at      TEXT NOT NULL
) STRICT;

CREATE INDEX assistant_proposals_conversation ON assistant_proposals (conversation_id, status);
