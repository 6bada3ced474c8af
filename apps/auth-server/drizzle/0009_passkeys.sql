CREATE TABLE "passkey_credentials" (
	"id" text PRIMARY KEY NOT NULL,
	"sub" text NOT NULL,
	"user_handle" text NOT NULL,
	"name" text NOT NULL,
	"public_key" text NOT NULL,
	"counter" bigint NOT NULL,
	"transports" text[] DEFAULT '{}'::text[] NOT NULL,
	"device_type" text NOT NULL,
	"backed_up" boolean NOT NULL,
	"aaguid" text NOT NULL,
	"created_at" bigint NOT NULL,
	"last_used_at" bigint
);
--> statement-breakpoint
CREATE TABLE "webauthn_challenges" (
	"binding" text PRIMARY KEY NOT NULL,
	"challenge" text NOT NULL,
	"sub" text,
	"user_handle" text,
	"expires_at" bigint NOT NULL
);
--> statement-breakpoint
CREATE INDEX "passkey_credentials_sub_idx" ON "passkey_credentials" USING btree ("sub");--> statement-breakpoint
CREATE INDEX "webauthn_challenges_expires_at_idx" ON "webauthn_challenges" USING btree ("expires_at");