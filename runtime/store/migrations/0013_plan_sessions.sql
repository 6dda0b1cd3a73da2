-- A conversation answered on the person's own AI plan (spec 003 §8) keeps one session of that
-- plan's agent, resumed from message to message: which provider it belongs to and the agent's own
-- session (or thread) id. Switching provider starts a new session with the conversation so far.
ALTER TABLE assistant_conversations ADD COLUMN plan_provider TEXT NOT NULL DEFAULT '';
ALTER TABLE assistant_conversations ADD COLUMN plan_session TEXT NOT NULL DEFAULT '';
