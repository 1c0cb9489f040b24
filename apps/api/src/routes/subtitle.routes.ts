// GET /v1/transcripts/{id}/subtitles?format=srt|vtt|txt
import { Router } from 'express';
import { type RouteLimit, keyedMount } from '../contract/mount';
import { ROUTE } from '../contract/routes.contract';
import { SUBTITLE_CONTENT_TYPES, parseSubtitlesQuery } from '../schemas/subtitles.schemas';
import type { SubtitleService } from '../services/subtitle.service';

export function subtitleRoutes(subtitles: SubtitleService, limit: RouteLimit): Router {
  const r = Router();
  keyedMount(r, limit)(ROUTE.getTranscriptSubtitles, async (req, res) => {
    const { format, ...opts } = parseSubtitlesQuery(req.query as Record<string, unknown>);
    const id = String(req.params.id);
    const body = await subtitles.export(req.auth!.accountId, id, format, opts);
    res.setHeader('Content-Type', `${SUBTITLE_CONTENT_TYPES[format]}; charset=utf-8`);
    res.setHeader('Content-Disposition', `inline; filename="${id}.${format}"`);
    res.send(body);
  });
  return r;
}
