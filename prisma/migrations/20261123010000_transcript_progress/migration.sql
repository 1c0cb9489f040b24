-- AlterTable
ALTER TABLE "transcripts" ADD COLUMN     "audio_seconds" DOUBLE PRECISION,
ADD COLUMN     "started_at" TIMESTAMPTZ(3),
ADD COLUMN     "worker_attempts" INTEGER NOT NULL DEFAULT 0;
