-- Chains rotated before `successor_hash` existed: their parents learn their successor, so a retry
-- within a reuse interval just after the upgrade is still answered (the interval is seconds to
-- minutes; a day covers it).
UPDATE "refresh_tokens" AS "parent" SET "successor_hash" = "child"."token_hash"
  FROM "refresh_tokens" AS "child"
  WHERE "child"."parent_hash" = "parent"."token_hash"
    AND "parent"."successor_hash" IS NULL
    AND "child"."created_at" > extract(epoch FROM now())::bigint - 86400;
