CREATE TABLE "mail_tokens" (
	"sub" text NOT NULL,
	"purpose" text NOT NULL,
	"token_hash" text NOT NULL,
	"binding" text NOT NULL,
	"email" text NOT NULL,
	"created_at" bigint NOT NULL,
	"expires_at" bigint NOT NULL,
	CONSTRAINT "mail_tokens_sub_purpose_pk" PRIMARY KEY("sub","purpose"),
	CONSTRAINT "mail_tokens_token_hash_unique" UNIQUE("token_hash")
);
--> statement-breakpoint
CREATE INDEX "mail_tokens_expires_at_idx" ON "mail_tokens" USING btree ("expires_at");