-- Upload quota: which uploads a transcript has used. Summing the unused uploads of an account
-- through NOT EXISTS (transcripts) read every upload the account ever kept (13 ms per chunk at
-- 20,000 used uploads); with this column and the partial index below the sum reads only the
-- unused ones.
ALTER TABLE "uploads" ADD COLUMN "used_at" TIMESTAMPTZ(3);

UPDATE "uploads" u SET "used_at" = t."first_use"
FROM (SELECT "upload_id", min("created_at") AS "first_use" FROM "transcripts"
      WHERE "upload_id" IS NOT NULL GROUP BY "upload_id") t
WHERE u."id" = t."upload_id";

-- Set by the database, not by each code path that creates a transcript: the API's create, the
-- test factories and any later tool stay right without a statement of their own (and the
-- create path gains no round trip).
CREATE FUNCTION "mark_upload_used"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE "uploads" SET "used_at" = now() WHERE "id" = NEW."upload_id" AND "used_at" IS NULL;
  RETURN NULL;
END
$$;

CREATE TRIGGER "transcripts_mark_upload_used" AFTER INSERT ON "transcripts"
  FOR EACH ROW WHEN (NEW."upload_id" IS NOT NULL) EXECUTE FUNCTION "mark_upload_used"();

-- The account's uploads that count against its quota.
CREATE INDEX "uploads_unused_idx" ON "uploads"("account_id") INCLUDE ("received_bytes", "expected_bytes")
  WHERE "erased_at" IS NULL AND "used_at" IS NULL;
