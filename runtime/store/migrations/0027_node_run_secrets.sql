-- A run that chose its secrets itself, even none (spec 002 §8.7.5): a node's run gets only the
-- names it carries, never the computer's default of every environment secret. runtime/jobs owns it.
ALTER TABLE job_settings ADD COLUMN secrets_named INTEGER NOT NULL DEFAULT 0;
