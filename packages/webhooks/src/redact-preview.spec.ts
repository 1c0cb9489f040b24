import { PREVIEW_MAX_CHARS, REDACTED, redactPreview } from './redact-preview';

const R = REDACTED;
const apiKey = 'tk_' + 'Zx8Qw2Er4Ty6Ui8Op0As2Df4Gh6Jk8Lz';
const jwt =
  'eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIn0.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c';
const hex64 = 'a3f1c9e07b2d4f6a8c1e3b5d7f9a0c2e4b6d8f0a1c3e5b7d9f1a3c5e7b9d0f2a';
const b64 = 'q9Xv2Lm8Rt4Wz7Yp1Kd5Hs3Nf6Bg0Cj+aE/uI8oPlMn=';

describe('redactPreview', () => {
  it('passes null and empty through', () => {
    expect(redactPreview(null)).toBeNull();
    expect(redactPreview('')).toBe('');
  });

  it('leaves an ordinary answer alone', () => {
    const body = JSON.stringify({
      ok: true,
      received: 'tr_01HQ3KZ8ABCDEF',
      requestId: '123e4567-e89b-12d3-a456-426614174000',
      message: 'Thanks, notice processed at 2024-05-01T12:00:00Z',
      path: '/v1/hooks/hark-transcripts/completed-notifications',
      handler: 'AbstractAnnotationConfigDispatcherServletInitializer',
      error: 'invalid token signature',
    });
    expect(redactPreview(body)).toBe(body);
    expect(redactPreview('<html><body><h1>502 Bad Gateway</h1></body></html>')).toBe(
      '<html><body><h1>502 Bad Gateway</h1></body></html>',
    );
  });

  describe('truncation', () => {
    it('keeps at most 512 characters', () => {
      expect(redactPreview('a '.repeat(1000))).toBe('a '.repeat(256));
      expect(redactPreview('x'.repeat(PREVIEW_MAX_CHARS))).toHaveLength(PREVIEW_MAX_CHARS);
    });

    it('counts characters, not UTF-16 units, and never splits a surrogate pair', () => {
      const out = redactPreview('😀'.repeat(600)) ?? '';
      expect(Array.from(out)).toHaveLength(512);
      expect(out).toBe('😀'.repeat(512));
    });

    it.each([
      ['an API key', apiKey],
      ['a hex secret', hex64],
      ['a base64 secret', b64],
      ['a JWT', jwt],
    ])('removes %s straddling the 512th character whole, not half of it', (_label, secret) => {
      for (const at of [480, 490, 500, 505, 511]) {
        const body = ' '.repeat(at) + secret + ' tail';
        const out = redactPreview(body) ?? '';
        expect(Array.from(out).length).toBeLessThanOrEqual(512);
        // No fragment of 6+ characters of the secret survives.
        for (let i = 0; i + 6 <= secret.length; i++) expect(out).not.toContain(secret.slice(i, i + 6));
      }
    });

    it('removes a password whose value straddles the boundary', () => {
      const out = redactPreview(' '.repeat(500) + 'password=hunter2hunter2hunter2') ?? '';
      expect(out).not.toMatch(/hunt/);
      expect(out.startsWith(' '.repeat(500) + 'password=[RE')).toBe(true);
    });

    it('stays within 512 when [REDACTED] is longer than what it replaced', () => {
      const out = redactPreview('y'.repeat(508) + 'tk_abcd') ?? '';
      expect(out.length).toBeLessThanOrEqual(512);
      expect(out).not.toContain('tk_ab');
    });
  });

  describe.each([
    [
      'JSON',
      (k: string, v: string) => `{"event":"x","${k}":"${v}","n":1}`,
      (k: string) => `{"event":"x","${k}":"${R}","n":1}`,
    ],
    [
      'JSON with spaces',
      (k: string, v: string) => `{ "${k}" : "${v}" }`,
      (k: string) => `{ "${k}" : "${R}" }`,
    ],
    [
      'escaped JSON',
      (k: string, v: string) => `{"body":"{\\"${k}\\":\\"${v}\\"}"}`,
      (k: string) => `{"body":"{\\"${k}\\":\\"${R}\\"}"}`,
    ],
    ['form', (k: string, v: string) => `a=1&${k}=${v}&b=2`, (k: string) => `a=1&${k}=${R}&b=2`],
    [
      'query string',
      (k: string, v: string) => `GET /cb?${k}=${v} HTTP/1.1`,
      (k: string) => `GET /cb?${k}=${R} HTTP/1.1`,
    ],
    [
      'header text',
      (k: string, v: string) => `HTTP/1.1 401\r\n${k}: ${v}\r\nX-Other: 1`,
      (k: string) => `HTTP/1.1 401\r\n${k}: ${R}\r\nX-Other: 1`,
    ],
    [
      'YAML',
      (k: string, v: string) => `user: bob\n${k}: ${v}\nok: true`,
      (k: string) => `user: bob\n${k}: ${R}\nok: true`,
    ],
    ['single quotes', (k: string, v: string) => `{'${k}': '${v}'}`, (k: string) => `{'${k}': '${R}'}`],
    ['XML', (k: string, v: string) => `<r><${k}>${v}</${k}></r>`, (k: string) => `<r><${k}>${R}</${k}></r>`],
  ])('secret-named fields in %s', (_form, make, expected) => {
    it.each([
      'password',
      'Password',
      'passwd',
      'secret',
      'client_secret',
      'token',
      'access_token',
      'api_key',
      'apikey',
      'API-KEY',
      'x-api-key',
      'private_key',
      'pass',
      'PASS',
      'auth',
      'Auth',
      'x-auth',
      'basic_auth',
      'user.pass',
      'auth_token',
    ])('%s', (key) => {
      expect(redactPreview(make(key, 'hunter2'))).toBe(expected(key));
    });
  });

  it('keeps names that merely contain `pass` or `auth`', () => {
    const kept =
      'author=Jane&authority=x&passenger=Bob&compass=north&bypass=1&authenticated=true&{"passage":"a"}';
    expect(redactPreview(kept)).toBe(kept);
  });

  it('redacts non-string JSON values and unterminated strings of secret fields', () => {
    expect(redactPreview('{"token": 123456, "ok": true}')).toBe(`{"token": ${R}, "ok": true}`);
    expect(redactPreview('{"ok":1,"password":"hunter2 and more')).toBe(`{"ok":1,"password":"${R}"`);
  });

  describe('bearer credentials', () => {
    it.each([
      ['header text', 'Authorization: Bearer abc.def-ghi', `Authorization: ${R}`],
      ['lower-case header', 'authorization: bearer xxx\r\nnext: 1', `authorization: ${R}\r\nnext: 1`],
      ['proxy header', 'Proxy-Authorization: Basic dXNlcjpwYXNz', `Proxy-Authorization: ${R}`],
      ['JSON', '{"authorization":"Bearer xxx","id":1}', `{"authorization":"${R}","id":1}`],
      [
        'JSON, nested under headers',
        '{"headers":{"Authorization":"Bearer xxx"}}',
        `{"headers":{"Authorization":"${R}"}}`,
      ],
      ['form', 'authorization=Bearer%20xxx&b=1', `authorization=${R}&b=1`],
      ['prose', 'rejected Bearer xxx because', `rejected Bearer ${R} because`],
      ['prose, basic', 'tried Basic dXNlcjpwYXNzd29yZA== first', `tried Basic ${R} first`],
      // Auth schemes are case-insensitive: lower case used to keep user:password123.
      [
        'prose, basic in lower case',
        'upstream said: 401 for credentials basic dXNlcjpwYXNzd29yZDEyMw==',
        `upstream said: 401 for credentials basic ${R}`,
      ],
      ['prose, BASIC', 'BASIC dXNlcjpwYXNz', `BASIC ${R}`],
      ['a session cookie by name', 'session=s%3Aabc123XYZ456.def; theme=dark', `session=${R}; theme=dark`],
      ['form, scheme and token', 'Authorization=Bearer abc.def&b=1', `Authorization=${R}&b=1`],
      ['form, lower case and spaces', 'authorization = bearer  abc.def&b=1', `authorization = ${R}&b=1`],
      ['form, end of body', 'x=1&Authorization=Bearer abc', `x=1&Authorization=${R}`],
      [
        'form, other schemes',
        'auth=Token abc&proxy_authorization=Basic dXNlcjpwYXNz',
        `auth=${R}&proxy_authorization=${R}`,
      ],
      ['header text, no space', 'AUTHORIZATION:Bearer abc.def', `AUTHORIZATION:${R}`],
      [
        'header text, upper-case scheme, spaces',
        'Authorization:   BEARER   abc.def',
        `Authorization:   ${R}`,
      ],
      ['YAML-ish, equals with spaces', 'x-authorization = Bearer abc.def\nok', `x-authorization = ${R}\nok`],
      ['JSON, lower-case scheme', '{"Authorization": "bearer abc.def"}', `{"Authorization": "${R}"}`],
      ['cookie header', 'Cookie: session=abc; theme=dark', `Cookie: ${R}`],
      ['set-cookie header', 'Set-Cookie: sid=abc123; HttpOnly', `Set-Cookie: ${R}`],
    ])('%s', (_label, body, expected) => {
      expect(redactPreview(body)).toBe(expected);
    });
  });

  describe('API keys and tokens by shape', () => {
    it.each([
      ['tk_ key in JSON', `{"key":"${apiKey}"}`, `{"key":"${R}"}`],
      ['tk_ key in form', `k=${apiKey}&x=1`, `k=${R}&x=1`],
      ['tk_ key in header text', `X-Hark-Key: ${apiKey}\r\n`, `X-Hark-Key: ${R}\r\n`],
      ['tk_ key in prose', `you sent ${apiKey}, which is revoked`, `you sent ${R}, which is revoked`],
      ['JWT in JSON', `{"jwt":"${jwt}"}`, `{"jwt":"${R}"}`],
      ['JWT in form', `assertion=${jwt}&x=1`, `assertion=${R}&x=1`],
      ['JWT in header text', `X-Session: ${jwt}\r\n`, `X-Session: ${R}\r\n`],
      ['JWT in prose', `expired: ${jwt} (2h)`, `expired: ${R} (2h)`],
      ['unsigned JWT', 'got eyJhbGciOiJub25lIn0.eyJzdWIiOiIxIn0. ok', `got ${R} ok`],
      ['cut-off JWT', 'got eyJhbGciOiJIUzI1', `got ${R}`],
      ['Stripe key', 'key sk_live_51HxYzAbCdEfGh end', `key ${R} end`],
      ['GitHub token', 'ghp_abcdefghijklmnopqrstuvwxyz0123 end', `${R} end`],
      ['Slack token', 'xoxb-1234567890-abcdefghij', R],
      ['AWS key id', 'id AKIAIOSFODNN7EXAMPLE.', `id ${R}.`],
      ['hex in JSON', `{"digest":"${hex64}"}`, `{"digest":"${R}"}`],
      ['hex in form', `sig=${hex64}&x=1`, `sig=${R}&x=1`],
      ['hex in header text', `X-Signature: ${hex64}`, `X-Signature: ${R}`],
      ['32 hex digits', `v=${'ab12'.repeat(8)};`, `v=${R};`],
      ['base64 in JSON', `{"blob":"${b64}"}`, `{"blob":"${R}"}`],
      ['base64 in form', `data=${b64}&x=1`, `data=${R}&x=1`],
      ['base64 in header text', `X-Key: ${b64}\r\n`, `X-Key: ${R}\r\n`],
      ['base64url', 'k=AbCdEfGhIjKlMnOpQrStUvWxYz012345_-', `k=${R}`],
      [
        'URL credentials',
        'retry at https://admin:s3cret@internal.example/x',
        `retry at https://${R}@internal.example/x`,
      ],
    ])('%s', (_label, body, expected) => {
      expect(redactPreview(body)).toBe(expected);
    });

    it('keeps short hex and runs that do not look random', () => {
      const kept = [
        `v=${'ab12'.repeat(7)}abc`, // 31 hex digits
        '/api/v2/users/12345/settings/notifications/email', // lower-case path with digits
        'state-of-the-art-machine-learning-models-2024', // slug
        'ThisIsAVeryLongCamelCaseIdentifierWithoutDigits',
        '123e4567-e89b-12d3-a456-426614174000', // UUID
      ];
      for (const body of kept) expect(redactPreview(body)).toBe(body);
    });
  });

  it('removes PEM private keys, even cut off', () => {
    const pem = '-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA\nabc\n-----END RSA PRIVATE KEY-----';
    expect(redactPreview(`key:\n${pem}\nbye`)).toBe(`key:\n${R}\nbye`);
    expect(redactPreview('x -----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0B')).toBe(`x ${R}`);
  });

  it('sees through percent-encoding: a form or query echoed back has its credentials removed too', () => {
    const sas =
      'https://acct.blob.core.windows.net/c/a.wav?sv=2022-11-02&se=2026-12-01&sig=Xk7q9VbN3%2BhRt5Lw2%2FyPz0aQe8Uc4Kd1Fg6Hj9Mn2Bo%3D';
    for (const body of [
      sas,
      `got url=${encodeURIComponent(sas)}`,
      'Authorization%3A%20Bearer%20abc123secret',
      'api_key%3Dsupersecretvalue123',
      'q=1&data=password%3Dhunter2secret',
      // A URL in a query, encoded twice (review).
      'next%3Dhttps%253A%252F%252Fx%253Fapi_key%253Dsupersecretvalue123',
    ]) {
      const out = redactPreview(body)!;
      expect(out).toContain(REDACTED);
      for (const secret of ['Xk7q9VbN3', 'abc123secret', 'supersecretvalue123', 'hunter2secret'])
        expect(out).not.toContain(secret);
    }
    // Encoded text without a credential stays as it was sent.
    expect(redactPreview('path=%2Fv1%2Ftranscripts&q=hello%20world')).toBe(
      'path=%2Fv1%2Ftranscripts&q=hello%20world',
    );
    expect(redactPreview('broken %E0%A4%A escape, 100%')).toBe('broken %E0%A4%A escape, 100%');
  });

  it('is idempotent', () => {
    const samples = [
      `Authorization: Bearer ${jwt}\r\n{"password":"x","api_key":"${apiKey}","sig":"${hex64}"}`,
      `a=1&token=${b64}&secret=${hex64}`,
      ' '.repeat(505) + apiKey,
    ];
    for (const body of samples) {
      const once = redactPreview(body);
      expect(redactPreview(once)).toBe(once);
    }
  });

  it.each([
    ['long word run', 'a'.repeat(100_000)],
    ['repeated secret words', 'token'.repeat(20_000)],
    ['repeated quoted names', '"password'.repeat(10_000)],
    ['repeated short names', 'x_pass_auth.'.repeat(10_000)],
    ['short names without separators', 'a_auth'.repeat(15_000)],
    ['schemes without values', 'auth=bearer '.repeat(8_000)],
    ['many separators', 'password=&'.repeat(10_000)],
    ['escaped quotes', '\\"token\\":\\"'.repeat(5_000) + 'x'.repeat(5_000)],
    ['pem starts', '-----BEGIN PRIVATE KEY-----'.repeat(3_000)],
    ['base64 run', 'Ab1+'.repeat(25_000)],
    ['percent escapes', 'a%2'.repeat(10_000)],
    ['one escape at the end of a long run', 'a'.repeat(8_000) + '%41'],
  ])('does not backtrack catastrophically on hostile input (%s)', (_label, body) => {
    // A guard against runaway regexes, not a speed target: CPU time of this process (wall time
    // also counts other jest workers on a loaded machine). Each case takes 2-35 ms here; a
    // pattern that backtracks catastrophically on the 8 KiB the redactor reads takes seconds.
    const started = process.cpuUsage();
    const out = redactPreview(body) ?? '';
    const used = process.cpuUsage(started);
    expect((used.user + used.system) / 1000).toBeLessThan(1000);
    expect(Array.from(out).length).toBeLessThanOrEqual(512);
  });
});
