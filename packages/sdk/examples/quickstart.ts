// Upload a file, transcribe it with a webhook, wait for it, fetch SRT subtitles, and verify the
// signed notice in a node:http receiver. Run against your service with
//   HARK_URL=http://127.0.0.1:3000 HARK_API_KEY=tk_... HARK_AUDIO=./meeting.wav node quickstart.js
// The service refuses webhook URLs on private addresses unless ALLOW_PRIVATE_URLS=true (local
// development); elsewhere set HARK_WEBHOOK_URL to a public address that reaches the receiver.
import { createServer } from 'node:http';
import { Hark, HarkApiError, type WebhookNotice, verifySignature } from '@hark/sdk';

const apiKey = process.env.HARK_API_KEY ?? '';
const baseUrl = process.env.HARK_URL ?? 'http://127.0.0.1:3000';
const audioPath = process.env.HARK_AUDIO ?? 'audio.wav';
const port = Number(process.env.HARK_WEBHOOK_PORT ?? 8787);
const webhookUrl = process.env.HARK_WEBHOOK_URL ?? `http://127.0.0.1:${port}/hooks/hark`;

async function main(): Promise<void> {
  // 1. The webhook receiver. Verify the raw bytes before parsing them: any re-serialisation
  //    changes the signature. Hark-Delivery-Id is the same on every retry of one notice.
  let onNotice: (notice: WebhookNotice) => void = () => {};
  const noticeReceived = new Promise<WebhookNotice>((resolve) => (onNotice = resolve));
  const receiver = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const raw = Buffer.concat(chunks);
      if (!verifySignature(raw, req.headers['hark-signature'], apiKey, { toleranceSeconds: 300 })) {
        res.writeHead(400).end();
        return;
      }
      res.writeHead(204).end();
      onNotice(JSON.parse(raw.toString('utf8')) as WebhookNotice);
    });
  });
  await new Promise<void>((resolve) => receiver.listen(port, resolve));

  try {
    const hark = new Hark({ apiKey, baseUrl });

    // 2. Resumable upload in chunks sized to the link (size and SHA-256 are declared and checked).
    const upload = await hark.upload(audioPath, {
      onProgress: (p) => console.log(`uploaded ${p.receivedBytes} of ${p.totalBytes} bytes`),
    });

    // 3. Create the transcript. The key makes retries of this step safe even across restarts.
    const created = await hark.transcripts.create(
      { uploadId: upload.id, webhookUrl, metadata: { source: 'quickstart' } },
      { idempotencyKey: `quickstart-${upload.id}` },
    );
    console.log(`transcript ${created.id}: ${created.status}`);

    // 4. Wait for it (long-polls with ?wait=60, no busy loop).
    const transcript = await hark.waitForTranscript(created.id, { timeoutMs: 10 * 60_000 });
    if (transcript.status !== 'done') {
      throw new Error(
        `transcript ${transcript.id} ended ${transcript.status}: ${transcript.error?.message ?? ''}`,
      );
    }
    console.log(`done: ${transcript.durationSeconds} s of audio, ${transcript.cost} cents`);
    console.log(transcript.text);

    // 5. Subtitles.
    const srt = await hark.transcripts.subtitles(transcript.id, { format: 'srt', maxLineLength: 42 });
    console.log(srt);

    // 6. The signed completion notice reaches the receiver.
    const notice = await noticeReceived;
    console.log(`webhook verified: ${notice.id} is ${notice.status}`);
  } catch (err) {
    if (err instanceof HarkApiError)
      console.error(`${err.code} (${err.status}, request ${err.requestId}): ${err.message}`);
    throw err;
  } finally {
    receiver.close();
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
