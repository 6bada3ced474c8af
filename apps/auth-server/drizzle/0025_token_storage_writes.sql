-- Authorization codes live 60 s and are single use (RFC 6749 §4.1.2, §10.5): an UNLOGGED table
-- writes no WAL for their insert and consumption. A crash empties it and a standby does not have
-- it, so codes in flight at a crash or a failover are lost: their exchange answers invalid_grant and
-- the user signs in again. Drizzle's schema cannot say UNLOGGED, hence this hand-written step.
ALTER TABLE "authorization_codes" SET UNLOGGED;--> statement-breakpoint
-- Chains rotated before `successor_hash` existed: their parents learn their successor, so a retry
-- within a reuse interval just after the upgrade is still answered (the interval is seconds to
-- minutes; a day covers it).
UPDATE "refresh_tokens" AS "parent" SET "successor_hash" = "child"."token_hash"
  FROM "refresh_tokens" AS "child"
  WHERE "child"."parent_hash" = "parent"."token_hash"
    AND "parent"."successor_hash" IS NULL
    AND "child"."created_at" > extract(epoch FROM now())::bigint - 86400;
--> statement-breakpoint
-- A refresh token's row is updated once, when it is rotated (`used_at`, `successor_hash`). With room
-- left on its page the new row version stays there (a HOT update, PostgreSQL's storage/heap docs):
-- no new entry in either index and one small WAL record, instead of the entries and the full-page
-- images of index pages after each checkpoint. Pages written from now on keep 30 % free.
ALTER TABLE "refresh_tokens" SET (fillfactor = 70);
