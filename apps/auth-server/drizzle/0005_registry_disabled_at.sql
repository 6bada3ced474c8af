ALTER TABLE "clients" ADD COLUMN "disabled_at" bigint;--> statement-breakpoint
ALTER TABLE "resources" ADD COLUMN "disabled_at" bigint;--> statement-breakpoint
ALTER TABLE "users" ADD COLUMN "disabled_at" bigint;