CREATE TABLE "consents" (
	"sub" text NOT NULL,
	"client_id" text NOT NULL,
	"scopes" text[] DEFAULT '{}'::text[] NOT NULL,
	"created_at" bigint NOT NULL,
	"updated_at" bigint NOT NULL,
	CONSTRAINT "consents_sub_client_id_pk" PRIMARY KEY("sub","client_id")
);
--> statement-breakpoint
CREATE TABLE "interactions" (
	"id" text PRIMARY KEY NOT NULL,
	"browser_hash" text NOT NULL,
	"request" jsonb NOT NULL,
	"login_sid" text,
	"approved_scopes" text[],
	"created_at" bigint NOT NULL,
	"expires_at" bigint NOT NULL
);
--> statement-breakpoint
CREATE TABLE "sso_sessions" (
	"id" text PRIMARY KEY NOT NULL,
	"key_hash" text NOT NULL,
	"sub" text NOT NULL,
	"auth_time" bigint NOT NULL,
	"created_at" bigint NOT NULL,
	"expires_at" bigint NOT NULL,
	CONSTRAINT "sso_sessions_key_hash_unique" UNIQUE("key_hash")
);
--> statement-breakpoint
CREATE INDEX "interactions_expires_at_idx" ON "interactions" USING btree ("expires_at");--> statement-breakpoint
CREATE INDEX "sso_sessions_sub_idx" ON "sso_sessions" USING btree ("sub");--> statement-breakpoint
CREATE INDEX "sso_sessions_expires_at_idx" ON "sso_sessions" USING btree ("expires_at");