-- AlterTable
ALTER TABLE "webhook_deliveries" ADD COLUMN     "pending" BOOLEAN NOT NULL DEFAULT false;
