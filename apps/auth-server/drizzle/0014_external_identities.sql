CREATE TABLE "external_identities" (
	"source" text NOT NULL,
	"subject" text NOT NULL,
	"sub" text NOT NULL,
	"created_at" bigint NOT NULL,
	"last_sign_in_at" bigint,
	CONSTRAINT "external_identities_source_subject_pk" PRIMARY KEY("source","subject")
);
--> statement-breakpoint
CREATE INDEX "external_identities_sub_idx" ON "external_identities" USING btree ("sub");