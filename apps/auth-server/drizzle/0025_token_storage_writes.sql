-- Authorization codes live 60 s and are single use (RFC 6749 §4.1.2, §10.5): an UNLOGGED table
-- writes no WAL for their insert and consumption. A crash empties it and a standby does not have
-- it, so codes in flight at a crash or a failover are lost: their exchange answers invalid_grant and
-- the user signs in again. Drizzle's schema can say neither this nor a fillfactor, hence these hand-written steps
-- (`drizzle-kit generate --custom`).
ALTER TABLE "authorization_codes" SET UNLOGGED;--> statement-breakpoint
-- A refresh token's row is updated once, when it is rotated (`used_at`, `successor_hash`). With room
-- left on its page the new row version stays there (a HOT update, PostgreSQL's storage/heap docs):
-- no new entry in either index and one small WAL record, instead of the entries and the full-page
-- images of index pages after each checkpoint. Pages written from now on keep 30 % free.
ALTER TABLE "refresh_tokens" SET (fillfactor = 70);
