CREATE TABLE "rate_limit_counters" (
	"key" text PRIMARY KEY NOT NULL,
	"window_started_at" bigint NOT NULL,
	"hits" integer NOT NULL
);
--> statement-breakpoint
ALTER TABLE "interactions" ADD COLUMN "device_code_hash" text;--> statement-breakpoint
CREATE INDEX "rate_limit_counters_window_started_at_idx" ON "rate_limit_counters" USING btree ("window_started_at");