ALTER TABLE "clients" ADD COLUMN "refresh_token_reuse_interval" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "refresh_tokens" ADD COLUMN "sealed_under_parent" text;--> statement-breakpoint
CREATE INDEX "refresh_tokens_parent_hash_idx" ON "refresh_tokens" USING btree ("parent_hash");