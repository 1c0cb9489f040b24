import { SIGNATURE_HEADER, signPayload } from './signature';

/** `User-Agent` of every notice. */
export const WEBHOOK_USER_AGENT = 'Hark-Webhooks/1';

// Never part of a notice (decisions, Webhooks: the body is a list item). Removed here as well as
// by the serializer, so a serializer mistake cannot send transcript content to a third party.
const CONTENT_FIELDS = ['text', 'words', 'utterances', 'diarizationSegments'] as const;

export interface SignedRequestInput {
  /** The transcript as a list item (the API's serialized form); sent as a bare JSON object. */
  transcriptListItem: Record<string, unknown>;
  /** The delivery record's id, sent as `Hark-Delivery-Id` so receivers can de-duplicate. */
  deliveryId: string;
  /** `signingSecretFromApiKey(key)` of the key that created the transcript, decrypted just now. */
  secretHex: string;
  /** Signing time. Default `new Date()`. */
  now?: Date;
}

export interface SignedRequest {
  /** The exact bytes to send; the signature covers this string, so send it unchanged. */
  body: string;
  headers: Record<string, string>;
}

/** Builds one completion notice: JSON body plus the four decided headers. */
export function buildSignedRequest({
  transcriptListItem,
  deliveryId,
  secretHex,
  now = new Date(),
}: SignedRequestInput): SignedRequest {
  const item: Record<string, unknown> = { ...transcriptListItem };
  for (const field of CONTENT_FIELDS) delete item[field];
  const body = JSON.stringify(item);
  const t = Math.floor(now.getTime() / 1000);
  return {
    body,
    headers: {
      'Content-Type': 'application/json',
      'User-Agent': WEBHOOK_USER_AGENT,
      'Hark-Delivery-Id': deliveryId,
      [SIGNATURE_HEADER]: signPayload(body, secretHex, t),
    },
  };
}
