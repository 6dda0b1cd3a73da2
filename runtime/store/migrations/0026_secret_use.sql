-- How runs may use each secret (spec 002 §8.7.5), and which secrets a run has.
--
-- env: runs that may have the secret get it in their environment as $NAME. On for a secret with no
-- allowed destination (an environment secret, as before this column), off for one with some (a
-- secret by reference stays out of every environment unless its owner turns env on).
-- git: git over https to the secret's allowed origins signs in with it, through Ensemble's
-- credential helper, for runs that name it; on for a secret allowed for a well-known git host.
-- git_user: the user name git is given with it ('' is x-access-token, which GitHub takes for a token).
ALTER TABLE secrets ADD COLUMN env INTEGER NOT NULL DEFAULT 0;
ALTER TABLE secrets ADD COLUMN git INTEGER NOT NULL DEFAULT 0;
ALTER TABLE secrets ADD COLUMN git_user TEXT NOT NULL DEFAULT '';
UPDATE secrets SET env = 1 WHERE kind = 'run' AND allow = '[]';
UPDATE secrets SET git = 1 WHERE kind = 'run' AND EXISTS (SELECT 1 FROM json_each(secrets.allow)
	WHERE value IN ('https://github.com', 'https://gitlab.com', 'https://bitbucket.org', 'https://codeberg.org'));

-- The computer's choice of which secrets a run that names none gets (one row): mode 'all' gives it
-- every environment secret, 'named' only the names listed here (possibly none).
CREATE TABLE secret_settings (
	id    INTEGER PRIMARY KEY CHECK (id = 1),
	mode  TEXT NOT NULL DEFAULT 'all' CHECK (mode IN ('all', 'named')),
	names TEXT NOT NULL DEFAULT '[]'
) STRICT;

-- The secrets a run names (its profile's or its assignment's settings; JSON list of names). None
-- leaves it to the computer's secret_settings.
ALTER TABLE job_settings ADD COLUMN secrets TEXT NOT NULL DEFAULT '[]';
