CREATE TABLE "federated_sessions" (
	"session_id" text PRIMARY KEY NOT NULL,
	"provider_id" text NOT NULL,
	"upstream_subject" text NOT NULL,
	"upstream_sid" text,
	"id_token" text NOT NULL,
	"created_at" bigint NOT NULL
);
--> statement-breakpoint
CREATE TABLE "identity_providers" (
	"id" text PRIMARY KEY NOT NULL,
	"issuer" text NOT NULL,
	"client_id" text NOT NULL,
	"display_name" text NOT NULL,
	"updated_at" bigint NOT NULL,
	"disabled_at" bigint
);
--> statement-breakpoint
CREATE TABLE "upstream_authorizations" (
	"state_hash" text PRIMARY KEY NOT NULL,
	"provider_id" text NOT NULL,
	"browser_hash" text NOT NULL,
	"interaction_id" text,
	"purpose" text DEFAULT 'sign_in' NOT NULL,
	"link_sub" text,
	"return_to" text,
	"code_verifier" text NOT NULL,
	"nonce" text NOT NULL,
	"created_at" bigint NOT NULL,
	"expires_at" bigint NOT NULL,
	"used_at" bigint
);
--> statement-breakpoint
CREATE INDEX "federated_sessions_provider_subject_idx" ON "federated_sessions" USING btree ("provider_id","upstream_subject");--> statement-breakpoint
CREATE INDEX "upstream_authorizations_expires_idx" ON "upstream_authorizations" USING btree ("expires_at");