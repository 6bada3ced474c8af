ALTER TABLE "authorization_codes" ADD COLUMN "dpop_jkt" text;--> statement-breakpoint
ALTER TABLE "clients" ADD COLUMN "auth_methods" text[] DEFAULT '{}'::text[] NOT NULL;--> statement-breakpoint
ALTER TABLE "clients" ADD COLUMN "jwks" jsonb;--> statement-breakpoint
ALTER TABLE "clients" ADD COLUMN "jwks_uri" text;--> statement-breakpoint
ALTER TABLE "clients" ADD COLUMN "require_signed_request_object" boolean DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE "clients" ADD COLUMN "profile" text;