-- An idempotency record's request_hash is a fingerprint of what the caller sent: for POST
-- /v1/uploads, of the file's bytes (their length and SHA-256); for POST /v1/transcripts, of the
-- body (its url, metadata...). It outlived the erasure of the upload or transcript by up to the
-- key's 24 hours, so a copy of a file could still be matched against a deleted upload. The
-- record itself must stay (deleting it would turn a replay's 404 into a silent new upload or
-- transcript), so the hash is replaced by a marker no SHA-256 hex digest can equal: every
-- request under the key then answers 404, as the API code reads the marker
-- (ERASED_REQUEST_HASH in @hark/transcripts).
--
-- Set by the database, not by each code path that erases: an upload is erased by a transcript's
-- deletion or expiry, by the upload sweeper, and by a chunk that finds its bytes gone.
CREATE FUNCTION "forget_upload_request_hash"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE "upload_idempotency_records" SET "request_hash" = 'erased'
  WHERE "upload_id" = NEW."id" AND "request_hash" <> 'erased';
  RETURN NULL;
END
$$;

CREATE TRIGGER "uploads_forget_request_hash" AFTER UPDATE OF "erased_at" ON "uploads"
  FOR EACH ROW WHEN (OLD."erased_at" IS NULL AND NEW."erased_at" IS NOT NULL)
  EXECUTE FUNCTION "forget_upload_request_hash"();

-- The erasure finds a transcript's record by its id (the primary key starts with the account).
CREATE INDEX "idempotency_records_transcript_id_idx" ON "idempotency_records"("transcript_id");

CREATE FUNCTION "forget_transcript_request_hash"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE "idempotency_records" SET "request_hash" = 'erased'
  WHERE "transcript_id" = NEW."id" AND "request_hash" <> 'erased';
  RETURN NULL;
END
$$;

CREATE TRIGGER "transcripts_forget_request_hash" AFTER UPDATE OF "deleted_at" ON "transcripts"
  FOR EACH ROW WHEN (OLD."deleted_at" IS NULL AND NEW."deleted_at" IS NOT NULL)
  EXECUTE FUNCTION "forget_transcript_request_hash"();

-- What was erased before this migration.
UPDATE "upload_idempotency_records" r SET "request_hash" = 'erased'
FROM "uploads" u WHERE u."id" = r."upload_id" AND u."erased_at" IS NOT NULL;

UPDATE "idempotency_records" r SET "request_hash" = 'erased'
FROM "transcripts" t
WHERE t."id" = r."transcript_id" AND t."account_id" = r."account_id" AND t."deleted_at" IS NOT NULL;
