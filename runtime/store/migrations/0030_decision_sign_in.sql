-- A run's question that is a sign-in (spec 002 §8.16.1): the tab held for the person and its site,
-- as JSON {tab, site, purpose}, so Needs me can open that tab's clean browser from the window or the
-- phone; '' for every other decision. runtime/needs owns it.
ALTER TABLE decisions ADD COLUMN sign_in TEXT NOT NULL DEFAULT '';
