-- AlterTable
ALTER TABLE "transcripts" ADD COLUMN     "task" TEXT NOT NULL DEFAULT 'transcribe',
ADD COLUMN     "prompt" TEXT,
ADD COLUMN     "temperature" DOUBLE PRECISION;
