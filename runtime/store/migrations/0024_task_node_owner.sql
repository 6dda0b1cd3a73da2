-- A task given to a node or a crew (spec 002 §6.6): at most one of the two is set, and then
-- owner_id is NULL. The node package owns the ids; records only keep them.
ALTER TABLE tasks ADD COLUMN assignee_node_id TEXT;
ALTER TABLE tasks ADD COLUMN assignee_room_id TEXT;
CREATE INDEX tasks_assignee_node ON tasks (assignee_node_id) WHERE assignee_node_id IS NOT NULL;
CREATE INDEX tasks_assignee_room ON tasks (assignee_room_id) WHERE assignee_room_id IS NOT NULL;
