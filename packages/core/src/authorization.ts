// `auth-scheme 1*SP token68`: a token of printable ASCII, bounded so a huge header costs nothing.
const CREDENTIALS = /^([A-Za-z][A-Za-z0-9!#$%&'*+.^_`|~-]{0,31}) +([\x21-\x7e]{1,4096})$/;

/**
 * The credentials of an `Authorization` header in `scheme`, or undefined. The scheme is matched
 * case-insensitively and any number of spaces may separate it from the credentials (RFC 9110
 * §11.1, §11.4), so `bearer <key>` and `BEARER  <key>` are `Bearer <key>`.
 */
export function authorizationCredentials(
  header: string | undefined,
  scheme: 'Bearer' | 'Basic',
): string | undefined {
  const m = CREDENTIALS.exec(header ?? '');
  return m && m[1]!.toLowerCase() === scheme.toLowerCase() ? m[2] : undefined;
}
