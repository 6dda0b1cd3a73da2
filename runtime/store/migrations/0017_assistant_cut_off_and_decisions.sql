-- A reply whose model stream broke off before its end marker (the connection dropped, the body
-- ended early): its text is what arrived, with the sentence saying so after it. Unlike another
-- failed turn it is sent as history, with a note that it was cut off, so a later turn knows.
ALTER TABLE assistant_messages ADD COLUMN cut_off INTEGER NOT NULL DEFAULT 0 CHECK (cut_off IN (0, 1));

-- The Needs me decision a held write waits on ('' for one that waits for Apply in the chat only).
-- Applying or discarding the write in the chat answers that decision in the same transaction, and
-- an answer on Needs me is what applies or discards it: whichever comes first settles both.
ALTER TABLE assistant_proposals ADD COLUMN decision_id TEXT NOT NULL DEFAULT '';
