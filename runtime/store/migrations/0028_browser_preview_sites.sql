-- The sites whose captures the owner sees before anything else does (spec 002 §8.14, held
-- captures): a node's screenshot of one is held on a media_preview card. runtime/node owns it.
CREATE TABLE browser_preview_sites (
	site TEXT PRIMARY KEY,
	created_at TEXT NOT NULL
);
