/** Longest `responsePreview`, in characters (Unicode code points). */
export const PREVIEW_MAX_CHARS = 512;

export const REDACTED = '[REDACTED]';

// Only the start of the body can reach the preview; bounding the input also bounds regex time,
// since the body comes from a third party (postJson already reads at most 4 KB).
const INPUT_MAX_CHARS = 8192;

// Key names whose values are credentials, in JSON, form, query, header or YAML-ish text. Matched
// anywhere inside the name (`client_secret`, `x-api-key`, `refresh_token`), case-insensitively.
const SECRET_WORDS = String.raw`pass(?:word|wd|phrase)|pwd|secret|token|api[_-]?key|access[_-]?key|private[_-]?key|credentials?|authorization|cookie|session|signature`;
// `pass`, `auth` and `sig` (an Azure SAS signature) are too short to match inside a name
// (passenger, author, signal), so they count only as a whole segment of it (`pass`, `user_pass`,
// `x-auth`, `basic_auth`, `sig`).
const SHORT_WORDS = String.raw`(?:[\w.-]*?[_.-])?(?:pass|auth|sig)(?![A-Za-z0-9])[\w.-]*`;
const NAME = String.raw`(?:[\w.-]*?(?:${SECRET_WORDS})[\w.-]*|${SHORT_WORDS})`;
// An unquoted credential value can start with its scheme (`Authorization=Bearer abc`): the
// scheme and the credential after it go together.
const SCHEME = String.raw`(?:bearer|basic|token|digest|negotiate|hoba|mutual|bot)[ \t]+`;

type Rule = [RegExp, string | ((match: string, ...groups: string[]) => string)];

const RULES: Rule[] = [
  // PEM private keys; an unterminated block (cut off) is removed to the end.
  [/-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----[\s\S]*?(?:-----END [A-Z0-9 ]*PRIVATE KEY-----|$)/g, REDACTED],
  // Credential headers in header-dump text: the whole value, to the end of the line.
  [
    /(?<![\w-])((?:proxy-)?authorization|(?:set-)?cookie|x-api-key|api-key|x-auth-token)([ \t]*:[ \t]*)[^\r\n]+/gi,
    `$1$2${REDACTED}`,
  ],
  // user:password@ in URLs.
  [/(\b[a-z][a-z0-9+.-]*:\/\/)[^\s/?#@"'<>]+@/gi, `$1${REDACTED}@`],
  // JWTs (header segment is base64url JSON, so starts eyJ); also a JWT cut short.
  [/eyJ[A-Za-z0-9_-]{5,}(?:\.[A-Za-z0-9_-]*){0,2}/g, REDACTED],
  // name = value, name: value, "name": "value", 'name'='value', \"name\":\"value\" (JSON in a
  // JSON string). The lookbehind anchors names at a token start, which keeps matching linear.
  [
    new RegExp(
      String.raw`(?<![\w.-])(\\?["']?)(${NAME})(\\?["']?)(\s*[:=]\s*)` +
        String.raw`(\\"(?:[^\\]|\\(?!"))*(?:\\")?|"(?:[^"\\]|\\.)*"?|'(?:[^'\\]|\\.)*'?|(?:${SCHEME})?[^\s&,;"'<>{}\[\]]+)`,
      'gi',
    ),
    (_m, open, name, close, sep, value) => {
      const quote = value.startsWith('\\"')
        ? '\\"'
        : value.startsWith('"')
          ? '"'
          : value.startsWith("'")
            ? "'"
            : '';
      return `${open}${name}${close}${sep}${quote}${REDACTED}${quote}`;
    },
  ],
  // <password>...</password> and friends.
  [new RegExp(String.raw`<(${NAME})>[^<]*`, 'gi'), `<$1>${REDACTED}`],
  // Authorization schemes outside a header line ("... with Bearer abc"). Not "Token": as a plain
  // word it is too common in error messages ("invalid token"); long tokens fall to rules below.
  [/\b(Bearer)\s+[A-Za-z0-9._~+/=-]+/gi, `$1 ${REDACTED}`],
  // Schemes are case-insensitive (RFC 9110): `basic dXNlcjpwYXNz` too.
  [/\b(Basic)\s+[A-Za-z0-9+/]{8,}={0,2}/gi, `$1 ${REDACTED}`],
  // Hark API keys (also a cut-off one) and well-known vendor key shapes.
  [/tk_[A-Za-z0-9_-]{4,}/g, REDACTED],
  [
    /\b(?:[sprw]k_(?:live|test)_[A-Za-z0-9]{8,}|whsec_[A-Za-z0-9]{16,}|gh[pousr]_[A-Za-z0-9]{20,}|xox[abprs]-[A-Za-z0-9-]{10,}|AKIA[0-9A-Z]{16})/g,
    REDACTED,
  ],
  // Long hex: digests, HMACs, raw keys. No word boundary needed: 32 hex digits in a row are a secret.
  [/[0-9a-fA-F]{32,}/g, REDACTED],
  // Long base64 / base64url runs. Kept: canonical UUIDs (ids, not secrets) and runs without both a
  // digit and an upper-case letter (paths, slugs, CamelCaseNames), which random base64 almost
  // always has at this length.
  [
    /[A-Za-z0-9+/_-]{32,}={0,2}/g,
    (run) =>
      /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(run) ||
      !/\d/.test(run) ||
      !/[A-Z]/.test(run)
        ? run
        : REDACTED,
  ],
];

function redactPlain(text: string): string {
  return RULES.reduce((acc, [pattern, replacement]) => acc.replace(pattern, replacement as never), text);
}

// A run of text holding percent-escapes (a form or a query echoed back): `api_key%3Dabc`,
// `sig=Xk7q%2BhR...%3D`, `Authorization%3A%20Bearer%20abc`.
// Anchored at the run's start, which keeps the search linear on a long run without escapes.
const ENCODED_RUN = /(?<![^\s"'<>])[^\s"'<>]*%[0-9A-Fa-f]{2}[^\s"'<>]*/g;

/** `%XX` escapes decoded (as UTF-8, else byte by byte); `+` stays `+` (base64 keeps it). */
function percentDecode(run: string): string {
  try {
    return decodeURIComponent(run);
  } catch {
    return run.replace(/%([0-9A-Fa-f]{2})/g, (_m, hex: string) => String.fromCharCode(parseInt(hex, 16)));
  }
}

/**
 * The rules, on the text and on the decoded forms of its percent-encoded runs (decoded up to three
 * times): a run whose decoded form has a credential is shown decoded and redacted; the others are
 * kept as sent.
 */
function redact(text: string): string {
  const decodedRuns = text.replace(ENCODED_RUN, (run) => {
    // A URL inside a query is encoded twice (`api_key%253D...`): up to three decodings.
    let decoded = run;
    for (let pass = 0; pass < 3; pass++) {
      const next = percentDecode(decoded);
      if (next === decoded) break;
      decoded = next;
      const redacted = redactPlain(decoded);
      if (redacted !== decoded) return redacted;
    }
    return run;
  });
  return redactPlain(decodedRuns);
}

function firstChars(text: string, max: number): string {
  if (text.length <= max) return text; // UTF-16 length >= code points, so nothing to cut
  return Array.from(text).slice(0, max).join('');
}

/**
 * The `responsePreview` of a webhook delivery: the start of the endpoint's body, at most 512
 * characters, with anything credential-like replaced by `[REDACTED]` (bearer and basic
 * credentials, credential headers, `tk_` API keys and common vendor keys, JWTs, values of
 * password/pass/auth/secret/token/api-key-like fields in JSON, form, header and XML text (with
 * the scheme word of an unquoted `Authorization=Bearer <token>`), URL userinfo,
 * PEM private keys, long hex and base64 runs), also inside percent-encoded text.
 *
 * Redaction runs before truncation, so a secret that straddles the 512th character is seen whole
 * and removed whole rather than leaving its first half; it runs again after truncation to catch
 * a fragment that only the cut made (and the result is cut again, since `[REDACTED]` can be
 * longer than what it replaced). Over-redaction is preferred to a leak.
 */
export function redactPreview(body: string | null): string | null {
  if (body === null) return null;
  const once = firstChars(redact(firstChars(body, INPUT_MAX_CHARS)), PREVIEW_MAX_CHARS);
  return firstChars(redact(once), PREVIEW_MAX_CHARS);
}
