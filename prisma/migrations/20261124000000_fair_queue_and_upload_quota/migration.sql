-- Fair scheduling: a transcript is handed to the queue (queued_at set) only while its account
-- has fewer than HARK_QUEUED_PER_ACCOUNT jobs waiting; the rest are held here.
ALTER TABLE "transcripts" ADD COLUMN "queued_at" TIMESTAMPTZ(3);

-- Everything processing before this migration was enqueued at create.
UPDATE "transcripts" SET "queued_at" = "created_at" WHERE "status" = 'processing';

-- The account's held transcripts, oldest first (what the feed picks).
CREATE INDEX "transcripts_held_idx" ON "transcripts"("account_id", "created_at", "id")
  WHERE "status" = 'processing' AND "queued_at" IS NULL;

-- The account's jobs waiting in the queue, not yet started (what the feed counts).
CREATE INDEX "transcripts_waiting_idx" ON "transcripts"("account_id")
  WHERE "status" = 'processing' AND "queued_at" IS NOT NULL AND "started_at" IS NULL;

-- Upload quota and the upload sweeper: "is this upload used by a transcript?"
CREATE INDEX "transcripts_upload_id_idx" ON "transcripts"("upload_id");

