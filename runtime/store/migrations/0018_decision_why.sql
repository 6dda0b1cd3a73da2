-- Needs me: one line saying why the recommended option is the careful choice ("It changes only
-- files in the run's own folder."), shown beside it; '' when nothing is recommended.
ALTER TABLE decisions ADD COLUMN why TEXT NOT NULL DEFAULT '';
