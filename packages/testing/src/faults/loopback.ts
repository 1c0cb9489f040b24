// Loopback servers for fault scenarios: the audio file the transcripts fetch, and a notice
// receiver that records which transcript each webhook was about.
import { readFileSync } from 'node:fs';
import http from 'node:http';
import type net from 'node:net';
import { startReceiver } from '../webhook-receiver';

/** Serves one file at `/<name>` on 127.0.0.1 (404 for anything else). */
export async function serveFile(
  file: string,
  name: string,
): Promise<{ url: string; close(): Promise<void> }> {
  const bytes = readFileSync(file);
  const server = http.createServer((q, s) =>
    q.url === `/${name}`
      ? s.writeHead(200, { 'content-length': bytes.length }).end(bytes)
      : s.writeHead(404).end(),
  );
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as net.AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/${name}`,
    close: () => new Promise((r) => (server.closeAllConnections(), server.close(() => r()))),
  };
}

export interface NoticeReceiver {
  url: string;
  /** One entry per notice received: the transcript it named ('' if none) and its attempt. */
  readonly requests: { transcriptId: string; attempt: string; at: number }[];
  /** How long to wait before answering 200 (settable while running). */
  delayMs: number;
  close(): Promise<void>;
}

/** The test receiver (`startReceiver`), answering 200 after `delayMs`, reading the transcript id. */
export async function startNoticeReceiver(): Promise<NoticeReceiver> {
  const state = { delayMs: 0 };
  const rec = await startReceiver(() => ({ status: 200, body: 'ok', delayMs: state.delayMs }));
  return {
    url: rec.url,
    get requests() {
      return rec.requests.map((r) => {
        let transcriptId = '';
        try {
          const j = JSON.parse(r.body) as { data?: { id?: string }; id?: string; transcriptId?: string };
          transcriptId = j.data?.id ?? j.transcriptId ?? j.id ?? '';
        } catch {
          // not JSON
        }
        return { transcriptId, attempt: String(r.headers['hark-attempt'] ?? ''), at: r.at };
      });
    },
    get delayMs() {
      return state.delayMs;
    },
    set delayMs(ms: number) {
      state.delayMs = ms;
    },
    close: () => rec.close(),
  };
}
