// GET /v1/transcripts/{id}/subtitles?format=srt|vtt|txt
import { Router, type RequestHandler } from 'express';
import { SUBTITLE_CONTENT_TYPES, parseSubtitlesQuery } from '../schemas/subtitles.schemas';
import type { SubtitleService } from '../services/subtitle.service';

export function subtitleRoutes(subtitles: SubtitleService, limit: (route: string) => RequestHandler): Router {
  const r = Router();
  r.get('/transcripts/:id/subtitles', limit('GET /v1/transcripts/{id}/subtitles'), async (req, res) => {
    const { format, ...opts } = parseSubtitlesQuery(req.query as Record<string, unknown>);
    const id = String(req.params.id);
    const body = await subtitles.export(req.auth!.accountId, id, format, opts);
    res.setHeader('Content-Type', `${SUBTITLE_CONTENT_TYPES[format]}; charset=utf-8`);
    res.setHeader('Content-Disposition', `inline; filename="${id}.${format}"`);
    res.send(body);
  });
  return r;
}
