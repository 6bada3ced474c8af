-- A refresh token's row is updated once, when it is rotated (`used_at`, `successor_hash`). With room
-- left on its page the new row version stays there (a HOT update, PostgreSQL's storage/heap docs):
-- no new entry in either index and one small WAL record, instead of the entries and the full-page
-- images of index pages after each checkpoint. Pages written from now on keep 30 % free.
-- Drizzle's schema cannot say a fillfactor, hence this hand-written step (`drizzle-kit generate --custom`).
ALTER TABLE "refresh_tokens" SET (fillfactor = 70);
