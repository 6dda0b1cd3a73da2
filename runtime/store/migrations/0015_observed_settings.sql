-- A run's settings as the agent itself reported them (spec 003 §3.4), beside those asked for in
-- job_settings: jobs.Observed as JSON, '{}' while the agent has reported nothing.
ALTER TABLE jobs ADD COLUMN observed TEXT NOT NULL DEFAULT '{}';
