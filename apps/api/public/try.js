// @ts-check
// The try page: key, file, options -> resumable upload -> create -> long-poll -> transcript.
import { ApiError, HarkClient, Retries, keyProblem, pause } from './api.js';
import { renderTranscript } from './transcript-view.js';
import { Transcriber } from './upload.js';

/** sessionStorage only: the key lives as long as this tab, never in localStorage or a cookie. */
const KEY_SLOT = 'hark.apiKey';

/**
 * @template {HTMLElement} T
 * @param {string} id
 * @returns {T}
 */
function $(id) {
  const el = document.getElementById(id);
  if (!el) throw new Error(`#${id} is missing from the page`);
  return /** @type {T} */ (el);
}

const form = /** @type {HTMLFormElement} */ ($('try-form'));
const keyInput = /** @type {HTMLInputElement} */ ($('api-key'));
const fileInput = /** @type {HTMLInputElement} */ ($('audio-file'));
const dropZone = $('drop-zone');
const player = /** @type {HTMLAudioElement} */ ($('player'));
const startButton = /** @type {HTMLButtonElement} */ ($('start'));
const cancelButton = /** @type {HTMLButtonElement} */ ($('cancel'));
const client = new HarkClient(() => keyInput.value.trim());
/** Keeps the chosen file's upload and its pending create between clicks. */
const transcriber = new Transcriber(client);

/** @type {File | null} */
let file = null;
/** @type {string | null} */
let audioUrl = null;

keyInput.value = sessionStorage.getItem(KEY_SLOT) ?? '';
keyInput.addEventListener('input', () => sessionStorage.setItem(KEY_SLOT, keyInput.value.trim()));
$('forget-key').addEventListener('click', () => {
  sessionStorage.removeItem(KEY_SLOT);
  keyInput.value = '';
});

/** @param {File | undefined} chosen */
function choose(chosen) {
  if (!chosen) return;
  file = chosen;
  if (audioUrl) URL.revokeObjectURL(audioUrl);
  audioUrl = URL.createObjectURL(chosen);
  player.src = audioUrl;
  $('file-info').textContent = `${chosen.name} (${megabytes(chosen.size)})`;
}
fileInput.addEventListener('change', () => choose(fileInput.files?.[0]));
dropZone.addEventListener('dragover', (e) => {
  e.preventDefault();
  dropZone.classList.add('over');
});
dropZone.addEventListener('dragleave', () => dropZone.classList.remove('over'));
dropZone.addEventListener('drop', (e) => {
  e.preventDefault();
  dropZone.classList.remove('over');
  choose(e.dataTransfer?.files[0]);
});

/** @param {number} bytes */
function megabytes(bytes) {
  return `${(bytes / 1e6).toFixed(bytes < 1e7 ? 2 : 1)} MB`;
}

/**
 * The create request's options from the form; a malformed field is left for the API to refuse.
 * @returns {Record<string, unknown>}
 */
function options() {
  /** @type {Record<string, unknown>} */
  const out = {};
  const language = /** @type {HTMLInputElement} */ ($('language')).value.trim();
  if (language) out.language = language;
  const speakers = /** @type {HTMLInputElement} */ ($('speakers')).value.trim();
  if (/^(auto|yes|true)$/i.test(speakers)) out.speakers = true;
  else if (/^\d+$/.test(speakers)) out.speakers = Number(speakers);
  else if (speakers) out.speakers = speakers;
  /** @type {Record<string, string>} */
  const glossary = {};
  for (const line of /** @type {HTMLTextAreaElement} */ ($('glossary')).value.split('\n')) {
    if (!line.trim()) continue;
    // `heard => written`; a line without an arrow becomes an entry with an empty side, which
    // the API refuses with `glossary_invalid` rather than the page dropping it unseen.
    const m = /^(.*?)\s*(?:=>|=|→)\s*(.*)$/.exec(line.trim());
    glossary[m ? (m[1] ?? '') : line.trim()] = m ? (m[2] ?? '') : '';
  }
  if (Object.keys(glossary).length > 0) out.glossary = glossary;
  return out;
}

/** @param {string} status */
function showStatus(status) {
  const el = $('status');
  el.textContent = status;
  el.className = `status ${status}`;
}

/** @param {ApiError | {code: string, message: string, requestId?: string | null}} err */
function showError(err) {
  $('error-code').textContent = err.code;
  $('error-message').textContent = err.message;
  $('error-request').hidden = !err.requestId;
  $('error-request-id').textContent = err.requestId ?? '';
  const fields = $('error-fields');
  fields.replaceChildren();
  for (const [name, key] of Object.entries(err instanceof ApiError ? (err.fields ?? {}) : {})) {
    const li = document.createElement('li');
    li.textContent = `${name}: ${key}`;
    fields.append(li);
  }
  $('error').hidden = false;
}

/**
 * Long-polls the transcript (`wait=60`) until it leaves `processing`, riding out a few lost
 * connections.
 * @param {string} id
 */
async function waitForTranscript(id) {
  const retries = new Retries(5);
  for (;;) {
    try {
      const t = await client.request('GET', `/transcripts/${encodeURIComponent(id)}?wait=60`);
      retries.succeeded();
      showStatus(t.status);
      if (t.status !== 'processing') return t;
    } catch (err) {
      // Backoff, never less than a `Retry-After` (rate_limited).
      const wait = retries.next(err);
      if (wait === null) throw err;
      await pause(wait);
    }
  }
}

/**
 * @param {Blob} blob
 * @param {string} name
 */
function save(blob, name) {
  const a = document.createElement('a');
  a.href = URL.createObjectURL(blob);
  a.download = name;
  a.click();
  setTimeout(() => URL.revokeObjectURL(a.href), 10_000);
}

/**
 * Shows the button as Stop while the file uploads: a click aborts the chunk in flight, and the
 * next Start with the same file goes on from what the API holds (upload.js, Transcriber).
 * @param {AbortController} controller
 */
function offerStop(controller) {
  cancelButton.textContent = 'Stop';
  cancelButton.disabled = false;
  cancelButton.hidden = false;
  cancelButton.onclick = () => {
    cancelButton.disabled = true;
    controller.abort(new ApiError(0, { code: 'upload_stopped', message: 'Stopped.', retryable: false }));
  };
}

/**
 * Shows the Cancel button for a processing transcript. A click asks the API to stop it; the
 * long-poll then returns the `canceled` transcript. A transcript that finished first (409
 * `transcript_finished`) is simply shown as it ended.
 * @param {string} id
 */
function offerCancel(id) {
  cancelButton.textContent = 'Cancel';
  cancelButton.disabled = false;
  cancelButton.hidden = false;
  cancelButton.onclick = async () => {
    cancelButton.disabled = true;
    try {
      await client.request('POST', `/transcripts/${encodeURIComponent(id)}/cancel`);
    } catch (err) {
      if (!(err instanceof ApiError)) throw err;
      if (err.code === 'transcript_finished') return;
      showError(err);
      cancelButton.disabled = false;
    }
  };
}

/** @param {any} t a finished transcript */
function showResult(t) {
  const summary = $('summary');
  summary.replaceChildren();
  const facts = [
    ['Duration', `${t.durationSeconds} s`],
    ['Language', t.language ?? '-'],
    ['Speakers', t.speakerCount ?? '-'],
    ['Model', t.model],
    // Rounded for reading; the JSON download has the exact amount.
    ['Cost', `${Number(t.cost.toFixed(4))} ${t.currency} cents`],
    ['Id', t.id],
  ];
  for (const [name, value] of facts) {
    const dt = document.createElement('dt');
    dt.textContent = String(name);
    const dd = document.createElement('dd');
    dd.textContent = String(value);
    summary.append(dt, dd);
  }
  renderTranscript($('utterances'), t, player);
  $('json').textContent = JSON.stringify(t, null, 2);
  $('downloads').onclick = async (e) => {
    const format = e.target instanceof HTMLElement ? e.target.dataset.format : undefined;
    if (!format) return;
    if (format === 'json') {
      save(new Blob([JSON.stringify(t, null, 2)], { type: 'application/json' }), `${t.id}.json`);
      return;
    }
    try {
      save(
        await client.download(`/transcripts/${encodeURIComponent(t.id)}/subtitles?format=${format}`),
        `${t.id}.${format}`,
      );
    } catch (err) {
      if (err instanceof ApiError) showError(err);
      else throw err;
    }
  };
  $('result').hidden = false;
}

form.addEventListener('submit', async (e) => {
  e.preventDefault(); // never a form submission: the key must not land in a URL
  $('error').hidden = true;
  const key = keyInput.value.trim();
  if (!key) return showError({ code: 'key_missing', message: 'Paste an API key first.' });
  const badKey = keyProblem(key);
  if (badKey) return showError({ code: 'key_malformed', message: badKey });
  if (!file) return showError({ code: 'file_missing', message: 'Choose or drop an audio file first.' });
  if (file.size === 0) return showError({ code: 'file_empty', message: 'The file is empty.' });
  const chosen = file;
  startButton.disabled = true;
  $('result').hidden = true;
  $('progress-section').hidden = false;
  $('transcript-id').textContent = '';
  const bar = /** @type {HTMLProgressElement} */ ($('upload-progress'));
  try {
    showStatus('uploading');
    // Uploads once per chosen file: a click after a failed create reuses the upload and resends
    // the create under the same Idempotency-Key (upload.js, Transcriber).
    const stop = new AbortController();
    offerStop(stop);
    const created = await transcriber.start(chosen, options(), {
      signal: stop.signal,
      // From here a transcript may exist: Stop gives way to Cancel once it does.
      onUploaded: () => {
        cancelButton.hidden = true;
      },
      onProgress: (sent, total) => {
        bar.value = total ? sent / total : 1;
        $('upload-text').textContent = `${megabytes(sent)} of ${megabytes(total)}`;
      },
      onRetry: (err, attempt) => {
        $('upload-text').textContent = `upload failed (${err.code}), going on (attempt ${attempt + 1})`;
      },
      onCreateRetry: (err, attempt) => {
        $('upload-text').textContent =
          `creating the transcript failed (${err.code}), trying again (attempt ${attempt + 1})`;
      },
    });
    cancelButton.hidden = true;
    $('transcript-id').textContent = created.id;
    showStatus(created.status);
    let t = created;
    if (t.status === 'processing') {
      offerCancel(t.id);
      t = await waitForTranscript(t.id);
    }
    if (t.status === 'done') showResult(t);
    else if (t.status === 'failed') showError({ ...t.error, requestId: null });
  } catch (err) {
    if (err instanceof ApiError && err.code === 'upload_stopped') {
      // The user's own doing: a note beside the bar, not an error.
      showStatus('stopped');
      $('upload-text').textContent = 'stopped: Transcribe with the same file goes on from what the API holds';
      return;
    }
    showStatus('error');
    if (err instanceof ApiError) showError(err);
    else showError({ code: 'page_error', message: String(err) });
  } finally {
    cancelButton.hidden = true;
    startButton.disabled = false;
  }
});
