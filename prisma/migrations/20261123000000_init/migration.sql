-- CreateEnum
CREATE TYPE "transcript_status" AS ENUM ('processing', 'done', 'failed', 'canceled');

-- CreateEnum
CREATE TYPE "ledger_kind" AS ENUM ('topup', 'grant', 'reserve', 'charge', 'release');

-- CreateTable
CREATE TABLE "accounts" (
    "id" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "total" DECIMAL(30,10) NOT NULL DEFAULT 0,
    "reserved" DECIMAL(30,10) NOT NULL DEFAULT 0,
    "topped_up" BOOLEAN NOT NULL DEFAULT false,
    "default_retention_days" INTEGER DEFAULT 30,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "accounts_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "api_keys" (
    "id" TEXT NOT NULL,
    "account_id" TEXT NOT NULL,
    "key_hmac" TEXT NOT NULL,
    "prefix" TEXT NOT NULL,
    "signing_secret_sealed" TEXT NOT NULL,
    "label" TEXT,
    "revoked_at" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "api_keys_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "uploads" (
    "id" TEXT NOT NULL,
    "account_id" TEXT NOT NULL,
    "received_bytes" BIGINT NOT NULL DEFAULT 0,
    "expected_bytes" BIGINT,
    "sha256" TEXT,
    "hash_state" BYTEA,
    "actual_sha256" TEXT,
    "erased_at" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "uploads_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "transcripts" (
    "id" TEXT NOT NULL,
    "account_id" TEXT NOT NULL,
    "api_key_id" TEXT NOT NULL,
    "status" "transcript_status" NOT NULL DEFAULT 'processing',
    "url" TEXT,
    "upload_id" TEXT,
    "language" TEXT,
    "requested_language" TEXT,
    "speakers" JSONB,
    "glossary" JSONB,
    "webhook_url" TEXT,
    "external_id" TEXT,
    "metadata" JSONB,
    "retention_days" INTEGER,
    "expires_at" TIMESTAMPTZ(3),
    "error_code" TEXT,
    "error_message" TEXT,
    "duration_seconds" INTEGER NOT NULL DEFAULT 0,
    "speaker_count" INTEGER,
    "rate" DECIMAL(30,10) NOT NULL,
    "cost" DECIMAL(30,10) NOT NULL DEFAULT 0,
    "reserved" DECIMAL(30,10) NOT NULL DEFAULT 0,
    "model" TEXT NOT NULL,
    "audio_sha256" TEXT,
    "deleted_at" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "finished_at" TIMESTAMPTZ(3),

    CONSTRAINT "transcripts_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "transcript_contents" (
    "transcript_id" TEXT NOT NULL,
    "text" TEXT NOT NULL,
    "words" JSONB NOT NULL,
    "utterances" JSONB NOT NULL,
    "diarization_segments" JSONB,

    CONSTRAINT "transcript_contents_pkey" PRIMARY KEY ("transcript_id")
);

-- CreateTable
CREATE TABLE "usage_records" (
    "id" TEXT NOT NULL,
    "account_id" TEXT NOT NULL,
    "transcript_id" TEXT NOT NULL,
    "seconds" INTEGER NOT NULL,
    "rate" DECIMAL(30,10) NOT NULL,
    "cost" DECIMAL(30,10) NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "usage_records_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "ledger_entries" (
    "id" TEXT NOT NULL,
    "account_id" TEXT NOT NULL,
    "kind" "ledger_kind" NOT NULL,
    "amount" DECIMAL(30,10) NOT NULL,
    "transcript_id" TEXT,
    "note" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "ledger_entries_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "idempotency_records" (
    "account_id" TEXT NOT NULL,
    "key" TEXT NOT NULL,
    "request_hash" TEXT NOT NULL,
    "transcript_id" TEXT,
    "status_code" INTEGER,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "expires_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "idempotency_records_pkey" PRIMARY KEY ("account_id","key")
);

-- CreateTable
CREATE TABLE "webhook_deliveries" (
    "id" TEXT NOT NULL,
    "transcript_id" TEXT NOT NULL,
    "url" TEXT NOT NULL,
    "attempt" INTEGER NOT NULL,
    "delivered" BOOLEAN NOT NULL,
    "status_code" INTEGER,
    "error" TEXT,
    "response_preview" TEXT,
    "duration_ms" INTEGER,
    "manual" BOOLEAN NOT NULL DEFAULT false,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "webhook_deliveries_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "api_keys_key_hmac_key" ON "api_keys"("key_hmac");

-- CreateIndex
CREATE INDEX "api_keys_account_id_idx" ON "api_keys"("account_id");

-- CreateIndex
CREATE INDEX "uploads_account_id_created_at_idx" ON "uploads"("account_id", "created_at");

-- CreateIndex
CREATE INDEX "transcripts_account_id_created_at_id_idx" ON "transcripts"("account_id", "created_at" DESC, "id" DESC);

-- CreateIndex
CREATE INDEX "transcripts_account_id_external_id_idx" ON "transcripts"("account_id", "external_id");

-- CreateIndex
CREATE INDEX "transcripts_status_idx" ON "transcripts"("status");

-- CreateIndex
CREATE INDEX "transcripts_expires_at_idx" ON "transcripts"("expires_at");

-- CreateIndex
CREATE UNIQUE INDEX "usage_records_transcript_id_key" ON "usage_records"("transcript_id");

-- CreateIndex
CREATE INDEX "usage_records_account_id_created_at_idx" ON "usage_records"("account_id", "created_at");

-- CreateIndex
CREATE INDEX "ledger_entries_account_id_created_at_idx" ON "ledger_entries"("account_id", "created_at");

-- CreateIndex
CREATE INDEX "ledger_entries_transcript_id_idx" ON "ledger_entries"("transcript_id");

-- CreateIndex
CREATE INDEX "idempotency_records_expires_at_idx" ON "idempotency_records"("expires_at");

-- CreateIndex
CREATE UNIQUE INDEX "webhook_deliveries_transcript_id_attempt_key" ON "webhook_deliveries"("transcript_id", "attempt");

-- CreateIndex
CREATE INDEX "webhook_deliveries_transcript_id_created_at_idx" ON "webhook_deliveries"("transcript_id", "created_at");

-- AddForeignKey
ALTER TABLE "api_keys" ADD CONSTRAINT "api_keys_account_id_fkey" FOREIGN KEY ("account_id") REFERENCES "accounts"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "uploads" ADD CONSTRAINT "uploads_account_id_fkey" FOREIGN KEY ("account_id") REFERENCES "accounts"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "transcripts" ADD CONSTRAINT "transcripts_account_id_fkey" FOREIGN KEY ("account_id") REFERENCES "accounts"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "transcripts" ADD CONSTRAINT "transcripts_api_key_id_fkey" FOREIGN KEY ("api_key_id") REFERENCES "api_keys"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "transcripts" ADD CONSTRAINT "transcripts_upload_id_fkey" FOREIGN KEY ("upload_id") REFERENCES "uploads"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "transcript_contents" ADD CONSTRAINT "transcript_contents_transcript_id_fkey" FOREIGN KEY ("transcript_id") REFERENCES "transcripts"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "usage_records" ADD CONSTRAINT "usage_records_account_id_fkey" FOREIGN KEY ("account_id") REFERENCES "accounts"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "usage_records" ADD CONSTRAINT "usage_records_transcript_id_fkey" FOREIGN KEY ("transcript_id") REFERENCES "transcripts"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "ledger_entries" ADD CONSTRAINT "ledger_entries_account_id_fkey" FOREIGN KEY ("account_id") REFERENCES "accounts"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "idempotency_records" ADD CONSTRAINT "idempotency_records_account_id_fkey" FOREIGN KEY ("account_id") REFERENCES "accounts"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "webhook_deliveries" ADD CONSTRAINT "webhook_deliveries_transcript_id_fkey" FOREIGN KEY ("transcript_id") REFERENCES "transcripts"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- Balance invariants enforced by the database, not only by code (not expressible in Prisma's schema language).
ALTER TABLE "accounts" ADD CONSTRAINT "accounts_balance_check" CHECK ("reserved" >= 0 AND "total" >= 0 AND "reserved" <= "total");
ALTER TABLE "transcripts" ADD CONSTRAINT "transcripts_money_check" CHECK ("reserved" >= 0 AND "cost" >= 0);
ALTER TABLE "ledger_entries" ADD CONSTRAINT "ledger_entries_amount_check" CHECK ("amount" >= 0);
-- At most one charge per transcript.
CREATE UNIQUE INDEX "ledger_entries_one_charge_per_transcript" ON "ledger_entries"("transcript_id") WHERE "kind" = 'charge';
