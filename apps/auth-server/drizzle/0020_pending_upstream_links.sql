CREATE TABLE "pending_upstream_links" (
	"token_hash" text PRIMARY KEY NOT NULL,
	"provider_id" text NOT NULL,
	"upstream_subject" text NOT NULL,
	"sub" text NOT NULL,
	"browser_hash" text NOT NULL,
	"interaction_id" text NOT NULL,
	"created_at" bigint NOT NULL,
	"expires_at" bigint NOT NULL,
	"used_at" bigint
);
--> statement-breakpoint
CREATE INDEX "pending_upstream_links_expires_idx" ON "pending_upstream_links" USING btree ("expires_at");