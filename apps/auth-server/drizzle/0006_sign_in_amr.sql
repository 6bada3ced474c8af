ALTER TABLE "grants" ADD COLUMN "amr" text[];--> statement-breakpoint
ALTER TABLE "sso_sessions" ADD COLUMN "amr" text[];