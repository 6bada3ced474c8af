ALTER TABLE "sso_sessions" ADD COLUMN "user_agent" text;--> statement-breakpoint
ALTER TABLE "sso_sessions" ADD COLUMN "ip" text;--> statement-breakpoint
ALTER TABLE "sso_sessions" ADD COLUMN "last_used_at" bigint;