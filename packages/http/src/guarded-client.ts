import http, { type ClientRequest, type RequestOptions } from 'node:http';
import https from 'node:https';
import type { Socket } from 'node:net';
import got, { type Got, type NormalizedOptions, type Options } from 'got';
import { type AddressPolicy, assertAllowedTarget, createGuardedLookup } from './guard';
import { isPublicAddress } from './public-address';

export interface GuardedClientOptions {
  /**
   * Turns the public-address guard off (operator setting `ALLOW_PRIVATE_URLS`), for local
   * development and tests against loopback servers. Default `false`.
   */
  allowPrivate?: boolean;
  /** Whole-request time-out, from start to the last byte of the body, in ms. Default 30 000. */
  timeoutMs?: number;
  /** Follow 3xx answers; each hop is re-checked by the guard. Default `true`. */
  followRedirects?: boolean;
  /** Most redirects followed before failing with `too_many_redirects`. Default 5. */
  maxRedirects?: number;
  /** `User-Agent` header. Default `Hark/1`. */
  userAgent?: string;
  /**
   * Which addresses the guard lets through. Default {@link isPublicAddress}; leave it alone in
   * production. Tests use it to treat one loopback address (127.0.0.2) as public, which is the
   * only way to exercise the redirect and connect-time checks without leaving the machine.
   */
  isAllowedAddress?: AddressPolicy;
}

/** A got instance made by {@link createGuardedClient}. */
export type GuardedClient = Got;

function targetOf(options: NormalizedOptions): URL {
  const { url } = options;
  if (url instanceof URL) return url;
  return new URL(String(url));
}

/** The error a `101 Switching Protocols` answer fails a request with (`request_failed`). */
export const UNEXPECTED_UPGRADE_CODE = 'ERR_UNEXPECTED_UPGRADE';

/**
 * `http(s).request`, except that a `101 Switching Protocols` answer fails the request. We never
 * ask for an upgrade, but got listens for one (it forwards the event), so Node hands the socket
 * over as upgraded: no response, no error and no got time-out ever follow, and a hostile server
 * held a download (the worker's job slot) forever, or a webhook send's socket after its deadline.
 * Node marks the request destroyed right after the event, so the error is raised on it by hand,
 * where got is listening.
 */
function requestRefusingUpgrades(url: URL, options: RequestOptions): ClientRequest {
  const request = (url.protocol === 'https:' ? https : http).request(url, options);
  request.once('upgrade', (_response: unknown, socket: Socket) => {
    socket.destroy();
    const error = Object.assign(new Error('the server switched protocols unasked'), {
      code: UNEXPECTED_UPGRADE_CODE,
    });
    request.emit('error', error);
  });
  return request;
}

/**
 * A got instance for URLs that callers supply (audio URLs, webhook URLs). With the guard on:
 * - every connection goes through a DNS lookup that refuses non-public answers, at connect time,
 *   so DNS rebinding between validation and connection cannot reach the internal network;
 * - IP-literal hosts and the scheme are checked before each request and on every redirect.
 *
 * Either way an unasked `101 Switching Protocols` fails the request ({@link UNEXPECTED_UPGRADE_CODE}).
 *
 * It never retries (callers own retries: BullMQ for downloads, the webhook schedule for sends)
 * and has its own agents, so it never reuses a socket that an unguarded client opened. Create one
 * per process and purpose (downloads, webhook sends) and reuse it.
 */
export function createGuardedClient(options: GuardedClientOptions = {}): GuardedClient {
  const {
    allowPrivate = false,
    timeoutMs = 30_000,
    followRedirects = true,
    maxRedirects = 5,
    userAgent = 'Hark/1',
    isAllowedAddress = isPublicAddress,
  } = options;
  const guard = (opts: NormalizedOptions): void => assertAllowedTarget(targetOf(opts), isAllowedAddress);

  return got.extend({
    agent: { http: new http.Agent(), https: new https.Agent() },
    request: requestRefusingUpgrades,
    timeout: { request: timeoutMs },
    retry: { limit: 0 },
    followRedirect: followRedirects,
    maxRedirects,
    headers: { 'user-agent': userAgent },
    ...(allowPrivate
      ? {}
      : {
          // got's type for dnsLookup is cacheable-lookup's; ours has net.connect's signature.
          dnsLookup: createGuardedLookup(undefined, isAllowedAddress) as unknown as Options['dnsLookup'],
          // got 14 re-runs beforeRequest on every hop too; beforeRedirect refuses the hop by name,
          // before any of the redirected request is built, and does not rely on that detail.
          hooks: { beforeRequest: [guard], beforeRedirect: [guard] },
        }),
  });
}
