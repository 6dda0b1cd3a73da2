-- The owner's answers to a node's computer cards (spec 002 §8.13), kept on this computer: for a
-- folder or an address, for one mission (a plan, else a conversation) or always. Once is never
-- kept. runtime/computer owns the table.
CREATE TABLE computer_answers (
    id         TEXT PRIMARY KEY,
    node_id    TEXT NOT NULL,
    scope_kind TEXT NOT NULL CHECK (scope_kind IN ('folder', 'address')),
    scope      TEXT NOT NULL,
    keep       TEXT NOT NULL CHECK (keep IN ('mission', 'always')),
    mission    TEXT NOT NULL DEFAULT '',
    created_at TEXT NOT NULL,
    UNIQUE (node_id, scope_kind, scope, keep, mission)
);
CREATE INDEX computer_answers_node ON computer_answers (node_id);
