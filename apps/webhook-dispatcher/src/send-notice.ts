import { type GuardedClient, classifyFailure, postJson } from '@hark/http';
import { buildSignedRequest, redactPreview } from '@hark/webhooks';
import type { AttemptResult } from './delivery-store';
import { type Notice, deliveryIdFor } from './notice';

/**
 * One POST of a notice: signed now (a fresh `t` and signature on every attempt), sent through
 * the guarded client (public-address check at connect time, no redirects), cut at `timeoutMs`.
 * Never throws: every outcome becomes a delivery record.
 */
export async function sendNotice(
  client: GuardedClient,
  notice: Notice,
  timeoutMs: number,
  now: Date = new Date(),
): Promise<AttemptResult> {
  const request = buildSignedRequest({
    transcriptListItem: notice.item,
    deliveryId: deliveryIdFor(notice.transcriptId),
    secretHex: notice.secretHex,
    now,
  });
  try {
    const r = await postJson(client, notice.url, request.body, request.headers, { timeoutMs });
    return {
      startedAt: now,
      delivered: r.statusCode !== null && r.statusCode >= 200 && r.statusCode < 300,
      statusCode: r.statusCode,
      error: r.error,
      responsePreview: redactPreview(r.bodyPreviewSource),
      durationMs: r.durationMs,
    };
  } catch (error) {
    // postJson reports network outcomes itself; this is got refusing the request up front
    // (a URL it cannot parse, say), which is still an attempt that reached nobody.
    return {
      startedAt: now,
      delivered: false,
      statusCode: null,
      error: classifyFailure(error),
      responsePreview: null,
      durationMs: Date.now() - now.getTime(),
    };
  }
}
