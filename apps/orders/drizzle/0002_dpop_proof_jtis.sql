CREATE TABLE "dpop_proof_jtis" (
	"key" text PRIMARY KEY NOT NULL,
	"expires_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE INDEX "dpop_proof_jtis_expires_at_idx" ON "dpop_proof_jtis" USING btree ("expires_at");