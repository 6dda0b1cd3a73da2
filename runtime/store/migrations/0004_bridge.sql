-- The context bridge: the keys editors and agents use, the person's files, and the word index that
-- ranked search reads.

-- An ens_ key. Only its SHA-256 is kept; hint is its last four characters, to tell keys apart in a
-- list. can_write lets it make changes; can_use_apps lets it reach connected apps (hosted only).
CREATE TABLE bridge_keys (
	id           TEXT PRIMARY KEY,
	name         TEXT NOT NULL,
	hash         TEXT NOT NULL UNIQUE,
	hint         TEXT NOT NULL,
	can_write    INTEGER NOT NULL DEFAULT 0 CHECK (can_write IN (0, 1)),
	can_use_apps INTEGER NOT NULL DEFAULT 0 CHECK (can_use_apps IN (0, 1)),
	created_at   TEXT NOT NULL,
	last_used_at TEXT,
	revoked_at   TEXT
) STRICT;

-- A file the person keeps in Ensemble. The bytes live under <data>/files/, named by their SHA-256, so
-- the same bytes are kept once. text is Ensemble's text of a text file (empty for anything else);
-- attached is a JSON array of the handles (ensemble://task/<id>) the file is on.
CREATE TABLE files (
	id         TEXT PRIMARY KEY,
	space_id   TEXT NOT NULL REFERENCES spaces(id),
	name       TEXT NOT NULL,
	media_type TEXT NOT NULL,
	size       INTEGER NOT NULL,
	sha256     TEXT NOT NULL,
	summary    TEXT NOT NULL DEFAULT '',
	text       TEXT NOT NULL DEFAULT '',
	tags       TEXT NOT NULL DEFAULT '[]',
	attached   TEXT NOT NULL DEFAULT '[]',
	source     TEXT NOT NULL DEFAULT 'upload',
	created_at TEXT NOT NULL,
	updated_at TEXT NOT NULL,
	deleted_at TEXT
) STRICT;

CREATE INDEX files_space_created ON files (space_id, deleted_at, created_at);

-- Ranked word search. search_docs gives each record a stable integer that is its row in search_fts;
-- triggers keep both in step with the records, so every write (and every Undo) updates the index in
-- its own transaction. Records in Trash leave the index. A file is indexed by its name and summary,
-- never its text.
CREATE TABLE search_docs (
	n      INTEGER PRIMARY KEY,
	kind   TEXT NOT NULL,
	ref_id TEXT NOT NULL,
	UNIQUE (kind, ref_id)
) STRICT;

CREATE VIRTUAL TABLE search_fts USING fts5(title, body, tokenize = 'unicode61 remove_diacritics 2');

CREATE TRIGGER search_task_ins AFTER INSERT ON tasks BEGIN
	INSERT OR IGNORE INTO search_docs (kind, ref_id) VALUES ('task', NEW.id);
	INSERT INTO search_fts (rowid, title, body)
		SELECT n, NEW.title, NEW.page FROM search_docs WHERE kind = 'task' AND ref_id = NEW.id AND NEW.deleted_at IS NULL;
END;
CREATE TRIGGER search_task_upd AFTER UPDATE OF title, page, deleted_at ON tasks BEGIN
	DELETE FROM search_fts WHERE rowid = (SELECT n FROM search_docs WHERE kind = 'task' AND ref_id = OLD.id);
	INSERT OR IGNORE INTO search_docs (kind, ref_id) VALUES ('task', NEW.id);
	INSERT INTO search_fts (rowid, title, body)
		SELECT n, NEW.title, NEW.page FROM search_docs WHERE kind = 'task' AND ref_id = NEW.id AND NEW.deleted_at IS NULL;
END;
CREATE TRIGGER search_task_del AFTER DELETE ON tasks BEGIN
	DELETE FROM search_fts WHERE rowid = (SELECT n FROM search_docs WHERE kind = 'task' AND ref_id = OLD.id);
	DELETE FROM search_docs WHERE kind = 'task' AND ref_id = OLD.id;
END;

CREATE TRIGGER search_project_ins AFTER INSERT ON projects BEGIN
	INSERT OR IGNORE INTO search_docs (kind, ref_id) VALUES ('project', NEW.id);
	INSERT INTO search_fts (rowid, title, body)
		SELECT n, NEW.name, NEW.summary || char(10) || NEW.notes FROM search_docs
		WHERE kind = 'project' AND ref_id = NEW.id AND NEW.deleted_at IS NULL;
END;
CREATE TRIGGER search_project_upd AFTER UPDATE OF name, summary, notes, deleted_at ON projects BEGIN
	DELETE FROM search_fts WHERE rowid = (SELECT n FROM search_docs WHERE kind = 'project' AND ref_id = OLD.id);
	INSERT OR IGNORE INTO search_docs (kind, ref_id) VALUES ('project', NEW.id);
	INSERT INTO search_fts (rowid, title, body)
		SELECT n, NEW.name, NEW.summary || char(10) || NEW.notes FROM search_docs
		WHERE kind = 'project' AND ref_id = NEW.id AND NEW.deleted_at IS NULL;
END;
CREATE TRIGGER search_project_del AFTER DELETE ON projects BEGIN
	DELETE FROM search_fts WHERE rowid = (SELECT n FROM search_docs WHERE kind = 'project' AND ref_id = OLD.id);
	DELETE FROM search_docs WHERE kind = 'project' AND ref_id = OLD.id;
END;

CREATE TRIGGER search_person_ins AFTER INSERT ON people BEGIN
	INSERT OR IGNORE INTO search_docs (kind, ref_id) VALUES ('person', NEW.id);
	INSERT INTO search_fts (rowid, title, body)
		SELECT n, NEW.name, concat_ws(char(10), NEW.role, NEW.team, NEW.relationship, NEW.email, NEW.notes)
		FROM search_docs WHERE kind = 'person' AND ref_id = NEW.id AND NEW.deleted_at IS NULL;
END;
CREATE TRIGGER search_person_upd AFTER UPDATE OF name, role, team, relationship, email, notes, deleted_at ON people BEGIN
	DELETE FROM search_fts WHERE rowid = (SELECT n FROM search_docs WHERE kind = 'person' AND ref_id = OLD.id);
	INSERT OR IGNORE INTO search_docs (kind, ref_id) VALUES ('person', NEW.id);
	INSERT INTO search_fts (rowid, title, body)
		SELECT n, NEW.name, concat_ws(char(10), NEW.role, NEW.team, NEW.relationship, NEW.email, NEW.notes)
		FROM search_docs WHERE kind = 'person' AND ref_id = NEW.id AND NEW.deleted_at IS NULL;
END;
CREATE TRIGGER search_person_del AFTER DELETE ON people BEGIN
	DELETE FROM search_fts WHERE rowid = (SELECT n FROM search_docs WHERE kind = 'person' AND ref_id = OLD.id);
	DELETE FROM search_docs WHERE kind = 'person' AND ref_id = OLD.id;
END;

CREATE TRIGGER search_repo_ins AFTER INSERT ON repos BEGIN
	INSERT OR IGNORE INTO search_docs (kind, ref_id) VALUES ('repo', NEW.id);
	INSERT INTO search_fts (rowid, title, body)
		SELECT n, NEW.name, concat_ws(char(10), NEW.url, NEW.path, NEW.default_branch)
		FROM search_docs WHERE kind = 'repo' AND ref_id = NEW.id AND NEW.deleted_at IS NULL;
END;
CREATE TRIGGER search_repo_upd AFTER UPDATE OF name, url, path, default_branch, deleted_at ON repos BEGIN
	DELETE FROM search_fts WHERE rowid = (SELECT n FROM search_docs WHERE kind = 'repo' AND ref_id = OLD.id);
	INSERT OR IGNORE INTO search_docs (kind, ref_id) VALUES ('repo', NEW.id);
	INSERT INTO search_fts (rowid, title, body)
		SELECT n, NEW.name, concat_ws(char(10), NEW.url, NEW.path, NEW.default_branch)
		FROM search_docs WHERE kind = 'repo' AND ref_id = NEW.id AND NEW.deleted_at IS NULL;
END;
CREATE TRIGGER search_repo_del AFTER DELETE ON repos BEGIN
	DELETE FROM search_fts WHERE rowid = (SELECT n FROM search_docs WHERE kind = 'repo' AND ref_id = OLD.id);
	DELETE FROM search_docs WHERE kind = 'repo' AND ref_id = OLD.id;
END;

CREATE TRIGGER search_page_ins AFTER INSERT ON pages BEGIN
	INSERT OR IGNORE INTO search_docs (kind, ref_id) VALUES ('page', NEW.id);
	INSERT INTO search_fts (rowid, title, body)
		SELECT n, NEW.title, NEW.body FROM search_docs WHERE kind = 'page' AND ref_id = NEW.id AND NEW.deleted_at IS NULL;
END;
CREATE TRIGGER search_page_upd AFTER UPDATE OF title, body, deleted_at ON pages BEGIN
	DELETE FROM search_fts WHERE rowid = (SELECT n FROM search_docs WHERE kind = 'page' AND ref_id = OLD.id);
	INSERT OR IGNORE INTO search_docs (kind, ref_id) VALUES ('page', NEW.id);
	INSERT INTO search_fts (rowid, title, body)
		SELECT n, NEW.title, NEW.body FROM search_docs WHERE kind = 'page' AND ref_id = NEW.id AND NEW.deleted_at IS NULL;
END;
CREATE TRIGGER search_page_del AFTER DELETE ON pages BEGIN
	DELETE FROM search_fts WHERE rowid = (SELECT n FROM search_docs WHERE kind = 'page' AND ref_id = OLD.id);
	DELETE FROM search_docs WHERE kind = 'page' AND ref_id = OLD.id;
END;

CREATE TRIGGER search_file_ins AFTER INSERT ON files BEGIN
	INSERT OR IGNORE INTO search_docs (kind, ref_id) VALUES ('file', NEW.id);
	INSERT INTO search_fts (rowid, title, body)
		SELECT n, NEW.name, NEW.summary FROM search_docs WHERE kind = 'file' AND ref_id = NEW.id AND NEW.deleted_at IS NULL;
END;
CREATE TRIGGER search_file_upd AFTER UPDATE OF name, summary, deleted_at ON files BEGIN
	DELETE FROM search_fts WHERE rowid = (SELECT n FROM search_docs WHERE kind = 'file' AND ref_id = OLD.id);
	INSERT OR IGNORE INTO search_docs (kind, ref_id) VALUES ('file', NEW.id);
	INSERT INTO search_fts (rowid, title, body)
		SELECT n, NEW.name, NEW.summary FROM search_docs WHERE kind = 'file' AND ref_id = NEW.id AND NEW.deleted_at IS NULL;
END;
CREATE TRIGGER search_file_del AFTER DELETE ON files BEGIN
	DELETE FROM search_fts WHERE rowid = (SELECT n FROM search_docs WHERE kind = 'file' AND ref_id = OLD.id);
	DELETE FROM search_docs WHERE kind = 'file' AND ref_id = OLD.id;
END;

-- The records written before this migration.
INSERT INTO search_docs (kind, ref_id)
	SELECT 'task', id FROM tasks UNION ALL SELECT 'project', id FROM projects
	UNION ALL SELECT 'person', id FROM people UNION ALL SELECT 'repo', id FROM repos
	UNION ALL SELECT 'page', id FROM pages;
INSERT INTO search_fts (rowid, title, body)
	SELECT d.n, t.title, t.page FROM search_docs d JOIN tasks t ON d.kind = 'task' AND t.id = d.ref_id WHERE t.deleted_at IS NULL
	UNION ALL SELECT d.n, p.name, p.summary || char(10) || p.notes FROM search_docs d JOIN projects p ON d.kind = 'project' AND p.id = d.ref_id WHERE p.deleted_at IS NULL
	UNION ALL SELECT d.n, p.name, concat_ws(char(10), p.role, p.team, p.relationship, p.email, p.notes) FROM search_docs d JOIN people p ON d.kind = 'person' AND p.id = d.ref_id WHERE p.deleted_at IS NULL
	UNION ALL SELECT d.n, r.name, concat_ws(char(10), r.url, r.path, r.default_branch) FROM search_docs d JOIN repos r ON d.kind = 'repo' AND r.id = d.ref_id WHERE r.deleted_at IS NULL
	UNION ALL SELECT d.n, g.title, g.body FROM search_docs d JOIN pages g ON d.kind = 'page' AND g.id = d.ref_id WHERE g.deleted_at IS NULL;
