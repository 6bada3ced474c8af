ALTER TABLE "clients" ADD COLUMN "registered_at" bigint;--> statement-breakpoint
ALTER TABLE "clients" ADD COLUMN "registration_access_token_hash" text;--> statement-breakpoint
ALTER TABLE "clients" ADD COLUMN "registration_metadata" jsonb;