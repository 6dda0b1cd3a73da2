-- Ordered workflows (hub_run_workflow): one held proposal whose steps run in order under one Apply.
-- plan_hash is the SHA-256 of the canonical steps JSON the person was shown; Apply refuses a plan
-- that no longer hashes to it. steps is the per-step state (JSON: [{id, tool, status, summary,
-- error}], status waiting, applied, failed or not applied), set in the transaction that applies
-- the steps, or beside the failed Apply's reason.
CREATE TABLE assistant_workflows (
	proposal_id     TEXT PRIMARY KEY REFERENCES assistant_proposals (id) ON DELETE CASCADE,
	conversation_id TEXT NOT NULL,
	call_id         TEXT NOT NULL,
	title           TEXT NOT NULL,
	plan_hash       TEXT NOT NULL,
	steps           TEXT NOT NULL,
	created_at      TEXT NOT NULL,
	updated_at      TEXT NOT NULL
) STRICT;
