-- A run's context window ('' the model's standard one, 'long') and fast mode (spec 003 §3.2), beside
-- its model and thinking level.
ALTER TABLE job_settings ADD COLUMN context_tier TEXT NOT NULL DEFAULT '' CHECK (context_tier IN ('', 'long'));
ALTER TABLE job_settings ADD COLUMN fast INTEGER NOT NULL DEFAULT 0;
