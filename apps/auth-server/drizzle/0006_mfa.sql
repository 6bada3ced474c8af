CREATE TABLE "recovery_codes" (
	"sub" text NOT NULL,
	"code_hash" text NOT NULL,
	"created_at" bigint NOT NULL,
	"used_at" bigint,
	CONSTRAINT "recovery_codes_sub_code_hash_pk" PRIMARY KEY("sub","code_hash")
);
--> statement-breakpoint
CREATE TABLE "totp_credentials" (
	"id" text PRIMARY KEY NOT NULL,
	"sub" text NOT NULL,
	"name" text NOT NULL,
	"secret_encrypted" text NOT NULL,
	"created_at" bigint NOT NULL,
	"confirmed_at" bigint,
	"last_used_at" bigint
);
--> statement-breakpoint
CREATE TABLE "totp_used_steps" (
	"sub" text NOT NULL,
	"step" bigint NOT NULL,
	"used_at" bigint NOT NULL,
	CONSTRAINT "totp_used_steps_sub_step_pk" PRIMARY KEY("sub","step")
);
--> statement-breakpoint
ALTER TABLE "clients" ADD COLUMN "require_mfa" boolean DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE "grants" ADD COLUMN "amr" text[];--> statement-breakpoint
ALTER TABLE "grants" ADD COLUMN "acr" text;--> statement-breakpoint
ALTER TABLE "resources" ADD COLUMN "require_mfa" boolean DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE "sso_sessions" ADD COLUMN "methods" jsonb DEFAULT '[]'::jsonb NOT NULL;--> statement-breakpoint
ALTER TABLE "users" ADD COLUMN "mfa_required" boolean DEFAULT false NOT NULL;--> statement-breakpoint
CREATE INDEX "totp_credentials_sub_idx" ON "totp_credentials" USING btree ("sub");