CREATE TABLE "access_tokens" (
	"token_hash" text PRIMARY KEY NOT NULL,
	"grant_id" text,
	"client_id" text NOT NULL,
	"sub" text NOT NULL,
	"scopes" text[] DEFAULT '{}'::text[] NOT NULL,
	"audience" text[] DEFAULT '{}'::text[] NOT NULL,
	"issued_at" bigint NOT NULL,
	"expires_at" bigint NOT NULL,
	"revoked_at" bigint,
	"dpop_jkt" text,
	"claims" jsonb DEFAULT '{}'::jsonb NOT NULL
);
--> statement-breakpoint
CREATE TABLE "authorization_codes" (
	"code_hash" text PRIMARY KEY NOT NULL,
	"grant_id" text NOT NULL,
	"client_id" text NOT NULL,
	"sub" text NOT NULL,
	"redirect_uri" text NOT NULL,
	"code_challenge" text,
	"nonce" text,
	"scopes" text[] DEFAULT '{}'::text[] NOT NULL,
	"resources" text[] DEFAULT '{}'::text[] NOT NULL,
	"sid" text,
	"auth_time" bigint NOT NULL,
	"expires_at" bigint NOT NULL,
	"used_at" bigint
);
--> statement-breakpoint
CREATE TABLE "clients" (
	"client_id" text PRIMARY KEY NOT NULL,
	"client_name" text NOT NULL,
	"secret_hash" text,
	"redirect_uris" text[] DEFAULT '{}'::text[] NOT NULL,
	"post_logout_redirect_uris" text[] DEFAULT '{}'::text[] NOT NULL,
	"grant_types" text[] DEFAULT '{}'::text[] NOT NULL,
	"scopes" text[] DEFAULT '{}'::text[] NOT NULL,
	"skip_consent" boolean DEFAULT false NOT NULL,
	"id_token_signing_alg" text DEFAULT 'RS256' NOT NULL,
	"allowed_cors_origins" text[] DEFAULT '{}'::text[] NOT NULL,
	"backchannel_logout_uri" text,
	"frontchannel_logout_uri" text,
	"refresh_tokens_without_offline_access" boolean DEFAULT false NOT NULL,
	"refresh_token_absolute_ttl" integer NOT NULL,
	"refresh_token_sliding_ttl" integer NOT NULL,
	"updated_at" bigint NOT NULL
);
--> statement-breakpoint
CREATE TABLE "grants" (
	"id" text PRIMARY KEY NOT NULL,
	"client_id" text NOT NULL,
	"sub" text NOT NULL,
	"scopes" text[] DEFAULT '{}'::text[] NOT NULL,
	"resources" text[] DEFAULT '{}'::text[] NOT NULL,
	"sid" text,
	"auth_time" bigint,
	"created_at" bigint NOT NULL,
	"revoked_at" bigint
);
--> statement-breakpoint
CREATE TABLE "refresh_tokens" (
	"token_hash" text PRIMARY KEY NOT NULL,
	"grant_id" text NOT NULL,
	"client_id" text NOT NULL,
	"sub" text NOT NULL,
	"scopes" text[] DEFAULT '{}'::text[] NOT NULL,
	"resources" text[] DEFAULT '{}'::text[] NOT NULL,
	"parent_hash" text,
	"created_at" bigint NOT NULL,
	"expires_at" bigint NOT NULL,
	"used_at" bigint,
	"revoked_at" bigint,
	"dpop_jkt" text
);
--> statement-breakpoint
CREATE TABLE "resources" (
	"id" text PRIMARY KEY NOT NULL,
	"scopes" text[] DEFAULT '{}'::text[] NOT NULL,
	"access_token_format" text NOT NULL,
	"access_token_ttl" integer NOT NULL,
	"access_token_signing_alg" text DEFAULT 'ES256' NOT NULL,
	"secret_hash" text,
	"claims" text[] DEFAULT '{}'::text[] NOT NULL,
	"updated_at" bigint NOT NULL
);
--> statement-breakpoint
CREATE TABLE "revoked_jwt_access_tokens" (
	"jti" text PRIMARY KEY NOT NULL,
	"expires_at" bigint NOT NULL
);
--> statement-breakpoint
CREATE TABLE "signing_keys" (
	"kid" text PRIMARY KEY NOT NULL,
	"alg" text NOT NULL,
	"public_jwk" jsonb NOT NULL,
	"private_key_ciphertext" text NOT NULL,
	"created_at" bigint NOT NULL,
	"activates_at" bigint NOT NULL,
	"retires_at" bigint,
	"remove_after" bigint
);
--> statement-breakpoint
CREATE TABLE "users" (
	"sub" text PRIMARY KEY NOT NULL,
	"username" text NOT NULL,
	"password_hash" text NOT NULL,
	"name" text,
	"email" text,
	"email_verified" boolean DEFAULT false NOT NULL,
	"allowed_scopes" text[],
	"updated_at" bigint NOT NULL,
	CONSTRAINT "users_username_unique" UNIQUE("username")
);
--> statement-breakpoint
CREATE INDEX "access_tokens_grant_id_idx" ON "access_tokens" USING btree ("grant_id");--> statement-breakpoint
CREATE INDEX "authorization_codes_grant_id_idx" ON "authorization_codes" USING btree ("grant_id");--> statement-breakpoint
CREATE INDEX "refresh_tokens_grant_id_idx" ON "refresh_tokens" USING btree ("grant_id");--> statement-breakpoint
CREATE INDEX "revoked_jwt_access_tokens_expires_at_idx" ON "revoked_jwt_access_tokens" USING btree ("expires_at");