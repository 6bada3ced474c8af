CREATE TABLE "sessions" (
	"id" text PRIMARY KEY NOT NULL,
	"sub" text NOT NULL,
	"sid" text,
	"claims" jsonb NOT NULL,
	"tokens" text NOT NULL,
	"access_token_expires_at" timestamp with time zone,
	"access_token_refresh_at" timestamp with time zone,
	"refresh_lease" text,
	"refresh_lease_expires_at" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"expires_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE INDEX "sessions_sid_idx" ON "sessions" USING btree ("sid");--> statement-breakpoint
CREATE INDEX "sessions_sub_idx" ON "sessions" USING btree ("sub");--> statement-breakpoint
CREATE INDEX "sessions_expires_at_idx" ON "sessions" USING btree ("expires_at");