-- The owner's rules for capturing sites (spec 002 §8.16): "preview", a capture of the site waits
-- for the owner before anything else sees it; "never", the site is not captured at all (no
-- screenshot, no run's live picture). One rule per site. runtime/node owns it.
ALTER TABLE browser_preview_sites RENAME TO browser_capture_sites;
ALTER TABLE browser_capture_sites ADD COLUMN rule TEXT NOT NULL DEFAULT 'preview' CHECK (rule IN ('preview', 'never'));
