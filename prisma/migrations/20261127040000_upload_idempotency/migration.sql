-- CreateTable
CREATE TABLE "upload_idempotency_records" (
    "account_id" TEXT NOT NULL,
    "key" TEXT NOT NULL,
    "request_hash" TEXT NOT NULL,
    "upload_id" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "expires_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "upload_idempotency_records_pkey" PRIMARY KEY ("account_id","key")
);

-- CreateIndex
CREATE INDEX "upload_idempotency_records_expires_at_idx" ON "upload_idempotency_records"("expires_at");

-- CreateIndex
CREATE INDEX "upload_idempotency_records_upload_id_idx" ON "upload_idempotency_records"("upload_id");

-- AddForeignKey
ALTER TABLE "upload_idempotency_records" ADD CONSTRAINT "upload_idempotency_records_account_id_fkey" FOREIGN KEY ("account_id") REFERENCES "accounts"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "upload_idempotency_records" ADD CONSTRAINT "upload_idempotency_records_upload_id_fkey" FOREIGN KEY ("upload_id") REFERENCES "uploads"("id") ON DELETE CASCADE ON UPDATE CASCADE;
