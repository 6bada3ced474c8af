DROP INDEX "authorization_codes_grant_id_idx";--> statement-breakpoint
DROP INDEX "refresh_tokens_parent_hash_idx";--> statement-breakpoint
ALTER TABLE "refresh_tokens" ADD COLUMN "successor_hash" text;