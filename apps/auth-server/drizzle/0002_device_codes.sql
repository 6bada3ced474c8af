CREATE TABLE "device_codes" (
	"device_code_hash" text PRIMARY KEY NOT NULL,
	"user_code_hash" text NOT NULL,
	"client_id" text NOT NULL,
	"scopes" text[] DEFAULT '{}'::text[] NOT NULL,
	"resources" text[] DEFAULT '{}'::text[] NOT NULL,
	"created_at" bigint NOT NULL,
	"expires_at" bigint NOT NULL,
	"poll_interval" integer NOT NULL,
	"last_polled_at" bigint,
	"status" text NOT NULL,
	"grant_id" text,
	"sub" text,
	"decided_at" bigint,
	"redeemed_at" bigint,
	CONSTRAINT "device_codes_user_code_hash_unique" UNIQUE("user_code_hash")
);
--> statement-breakpoint
CREATE INDEX "device_codes_expires_at_idx" ON "device_codes" USING btree ("expires_at");