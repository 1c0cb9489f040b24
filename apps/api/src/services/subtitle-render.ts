import { type Cue, type CueOptions, type SubtitleWord, buildCues } from './subtitle-cues';

/**
 * SRT, WebVTT and plain text from a done transcript's content. Pure: the route fetches, this
 * formats. Speaker labels appear only when the transcript was diarized and the caller wants
 * them: SRT and text prefix `A: `, WebVTT uses its voice tag `<v A>`.
 */
export type SubtitleFormat = 'srt' | 'vtt' | 'txt';

export interface SubtitleOptions extends Omit<CueOptions, 'labelWidth'> {
  speakerLabels: boolean;
}

export interface SubtitleContent {
  text: string;
  words: readonly SubtitleWord[];
  utterances: readonly { text: string; speaker: string | null }[];
}

/** `00:01:02,345` (SRT uses a comma, WebVTT a dot). Hours grow past two digits if they must. */
export function formatTimestamp(seconds: number, separator: ',' | '.'): string {
  const total = Math.max(0, Math.round(seconds * 1000));
  const ms = total % 1000;
  const s = Math.floor(total / 1000) % 60;
  const m = Math.floor(total / 60_000) % 60;
  const h = Math.floor(total / 3_600_000);
  const two = (n: number) => String(n).padStart(2, '0');
  return `${two(h)}:${two(m)}:${two(s)}${separator}${String(ms).padStart(3, '0')}`;
}

/** WebVTT cue text: `&`, `<` and `>` are markup (and `-->` would end the timing line). */
function escapeVtt(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

export function renderSrt(cues: readonly Cue[], labels: boolean): string {
  return cues
    .map((cue, i) => {
      const lines = [...cue.lines];
      if (labels && cue.speaker !== null) lines[0] = `${cue.speaker}: ${lines[0]}`;
      const timing = `${formatTimestamp(cue.start, ',')} --> ${formatTimestamp(cue.end, ',')}`;
      return `${i + 1}\n${timing}\n${lines.join('\n')}\n`;
    })
    .join('\n');
}

export function renderVtt(cues: readonly Cue[], labels: boolean): string {
  const blocks = cues.map((cue) => {
    const text = cue.lines.map(escapeVtt).join('\n');
    const voice = labels && cue.speaker !== null ? `<v ${escapeVtt(cue.speaker)}>` : '';
    return `${formatTimestamp(cue.start, '.')} --> ${formatTimestamp(cue.end, '.')}\n${voice}${text}\n`;
  });
  return ['WEBVTT\n', ...blocks].join('\n');
}

/** The text; diarized: one paragraph per utterance, each with its speaker's label when wanted. */
export function renderText(content: SubtitleContent, diarized: boolean, labels: boolean): string {
  if (!diarized) return content.text === '' ? '' : `${content.text}\n`;
  return content.utterances
    .map((u) => (labels && u.speaker !== null ? `${u.speaker}: ${u.text}` : u.text))
    .map((p) => `${p}\n`)
    .join('\n');
}

/** The body of one export. Labels count toward an SRT cue's first line; a VTT voice tag is not shown as text. */
export function renderSubtitles(
  format: SubtitleFormat,
  content: SubtitleContent,
  diarized: boolean,
  opts: SubtitleOptions,
): string {
  const labels = diarized && opts.speakerLabels;
  if (format === 'txt') return renderText(content, diarized, labels);
  const labelWidth =
    labels && format === 'srt'
      ? (speaker: string | null) => (speaker === null ? 0 : speaker.length + 2)
      : undefined;
  const cues = buildCues(content.words, { ...opts, ...(labelWidth ? { labelWidth } : {}) });
  return format === 'srt' ? renderSrt(cues, labels) : renderVtt(cues, labels);
}
