-- When the upload sweeper last removed what the blob store held for an erased upload. The sweeper
-- used to re-check every upload erased in the last 7 days on every run (three S3 calls each),
-- so a caller who made erased uploads for free multiplied its calls; now each erased upload is
-- cleared once, after the erasure has settled, and marked here.
ALTER TABLE "uploads" ADD COLUMN "blobs_removed_at" TIMESTAMPTZ(3);

-- Those erased more than 7 days ago were re-checked by the sweeper for that whole week already.
UPDATE "uploads" SET "blobs_removed_at" = "erased_at"
WHERE "erased_at" IS NOT NULL AND "erased_at" < now() - interval '7 days';

-- The sweeper's work list: erased uploads not cleared yet (few at a time).
CREATE INDEX "uploads_blobs_to_remove_idx" ON "uploads"("erased_at")
  WHERE "erased_at" IS NOT NULL AND "blobs_removed_at" IS NULL;
