-- AlterTable
ALTER TABLE "transcript_contents" ADD COLUMN     "segments" JSONB;
