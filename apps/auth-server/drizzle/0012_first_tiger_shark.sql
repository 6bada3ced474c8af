ALTER TABLE "users" ADD COLUMN "managed_by" text DEFAULT 'seed' NOT NULL;--> statement-breakpoint
ALTER TABLE "users" ADD COLUMN "disabled_by" text;--> statement-breakpoint
ALTER TABLE "users" ADD COLUMN "seed_fingerprint" text;