// GET / and GET /try (the browser "try it" page), GET /try/<asset> (its script modules and style)
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { IRouter, Response } from 'express';

/**
 * `apps/api/public`, from the bundle (`apps/api/dist/main.js`) and from source
 * (`apps/api/src/routes/*.ts`, tests and benches) alike; a bundle elsewhere (bench/api's) is
 * given it in `HARK_TRY_PAGE_DIR`.
 */
export const PAGE_DIR = [
  process.env.HARK_TRY_PAGE_DIR,
  path.resolve(__dirname, '../public'),
  path.resolve(__dirname, '../../public'),
].find((dir): dir is string => {
  if (dir === undefined) return false;
  try {
    readFileSync(path.join(dir, 'try.html'));
    return true;
  } catch {
    return false;
  }
});

/** The page's files: served by these names only, so nothing else in the folder is reachable. */
export const PAGE_ASSETS = {
  'try.css': 'text/css; charset=utf-8',
  'api.js': 'text/javascript; charset=utf-8',
  'upload.js': 'text/javascript; charset=utf-8',
  'transcript-view.js': 'text/javascript; charset=utf-8',
  'try.js': 'text/javascript; charset=utf-8',
} as const;

/**
 * The page's own files and nothing else: its scripts and style from this origin, API calls to
 * this origin, the chosen file played from a `blob:` URL. No inline script or style, no framing,
 * no form submission (the key must never land in a URL), no referrer.
 */
export const PAGE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  'media-src blob:',
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

function send(res: Response, body: Buffer, type: string): void {
  // Set here only: the page's headers never reach the API's routes.
  res.setHeader('Content-Security-Policy', PAGE_CSP);
  res.setHeader('X-Content-Type-Options', 'nosniff');
  res.setHeader('X-Frame-Options', 'DENY');
  res.setHeader('Referrer-Policy', 'no-referrer');
  // Revalidate every time (Express adds an ETag, so an unchanged file is a 304).
  res.setHeader('Cache-Control', 'no-cache');
  res.type(type).send(body);
}

/**
 * The try page: static files read once at boot (a missing file stops the API from starting).
 * No API key (the page asks for one and sends it to /v1 itself) and no rate limit: the files are
 * in memory and cost no more to answer than `/healthz`.
 */
export function tryPageRoutes(r: IRouter, dir: string | undefined = PAGE_DIR): void {
  if (!dir) throw new Error('the try page (apps/api/public/try.html) was not found next to the API');
  const html = readFileSync(path.join(dir, 'try.html'));
  const page = (_req: unknown, res: Response) => send(res, html, 'text/html; charset=utf-8');
  r.get('/', page);
  r.get('/try', page);
  for (const [name, type] of Object.entries(PAGE_ASSETS)) {
    const body = readFileSync(path.join(dir, name));
    r.get(`/try/${name}`, (_req, res) => send(res, body, type));
  }
}
