CREATE TABLE "dpop_jtis" (
	"key" text PRIMARY KEY NOT NULL,
	"expires_at" bigint NOT NULL
);
--> statement-breakpoint
CREATE TABLE "pushed_authorization_requests" (
	"request_uri_hash" text PRIMARY KEY NOT NULL,
	"client_id" text NOT NULL,
	"params" jsonb NOT NULL,
	"resources" text[] DEFAULT '{}'::text[] NOT NULL,
	"created_at" bigint NOT NULL,
	"expires_at" bigint NOT NULL
);
--> statement-breakpoint
ALTER TABLE "clients" ADD COLUMN "dpop_bound_access_tokens" boolean DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE "clients" ADD COLUMN "dpop_nonce_required" boolean DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE "clients" ADD COLUMN "require_pushed_authorization_requests" boolean DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE "clients" ADD COLUMN "token_exchange" jsonb;--> statement-breakpoint
ALTER TABLE "clients" ADD COLUMN "keep_offline_access_on_logout" boolean DEFAULT false NOT NULL;--> statement-breakpoint
CREATE INDEX "dpop_jtis_expires_at_idx" ON "dpop_jtis" USING btree ("expires_at");--> statement-breakpoint
CREATE INDEX "pushed_authorization_requests_expires_at_idx" ON "pushed_authorization_requests" USING btree ("expires_at");--> statement-breakpoint
CREATE INDEX "grants_sid_idx" ON "grants" USING btree ("sid");