-- AlterTable
ALTER TABLE "uploads" ADD COLUMN     "multipart_upload_id" TEXT;
