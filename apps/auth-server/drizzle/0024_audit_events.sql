CREATE TABLE "audit_events" (
	"id" bigint PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "audit_events_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"time" bigint NOT NULL,
	"event" text NOT NULL,
	"sub" text,
	"client_id" text,
	"ip" text,
	"actor" text,
	"outcome" text NOT NULL,
	"details" jsonb NOT NULL
);
--> statement-breakpoint
CREATE INDEX "audit_events_time_idx" ON "audit_events" USING btree ("time","id");--> statement-breakpoint
CREATE INDEX "audit_events_sub_time_idx" ON "audit_events" USING btree ("sub","time","id") WHERE "audit_events"."sub" is not null;--> statement-breakpoint
CREATE INDEX "audit_events_client_time_idx" ON "audit_events" USING btree ("client_id","time","id") WHERE "audit_events"."client_id" is not null;--> statement-breakpoint
CREATE INDEX "audit_events_event_time_idx" ON "audit_events" USING btree ("event","time","id");