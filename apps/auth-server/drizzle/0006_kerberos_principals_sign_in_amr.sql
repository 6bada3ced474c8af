CREATE TABLE "kerberos_principals" (
	"principal" text PRIMARY KEY NOT NULL,
	"sub" text NOT NULL,
	"updated_at" bigint NOT NULL
);
--> statement-breakpoint
ALTER TABLE "grants" ADD COLUMN "amr" text[];--> statement-breakpoint
ALTER TABLE "sso_sessions" ADD COLUMN "amr" text[];--> statement-breakpoint
CREATE INDEX "kerberos_principals_sub_idx" ON "kerberos_principals" USING btree ("sub");