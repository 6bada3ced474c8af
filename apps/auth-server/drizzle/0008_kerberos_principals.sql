CREATE TABLE "kerberos_principals" (
	"principal" text PRIMARY KEY NOT NULL,
	"sub" text NOT NULL,
	"updated_at" bigint NOT NULL
);
--> statement-breakpoint
CREATE INDEX "kerberos_principals_sub_idx" ON "kerberos_principals" USING btree ("sub");