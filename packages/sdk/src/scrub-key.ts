/** Links of a cause graph searched (and copied) at most; deeper counts as quoting the key and is cut. */
const MAX_DEPTH = 8;
/** Characters of the key's start that count as the key when a message cuts it short. */
const MIN_FRAGMENT = 12;
const REDACTED = '[api key]';

/**
 * Keeps the API key out of what the SDK hands its caller: text, and the errors a custom fetch (a
 * proxy's, say) may reject with, whose message, stack, code, properties, `cause` chain or
 * AggregateError `errors` may quote the Authorization header, whole or cut short.
 */
export class KeyScrubber {
  readonly #key: string;
  readonly #start: string;

  constructor(key: string) {
    this.#key = key;
    this.#start = key.slice(0, Math.min(MIN_FRAGMENT, key.length));
  }

  /** `text` with the key, and any run of 12 or more of its first characters, replaced. */
  text(text: string): string {
    if (this.#start.length === 0) return text;
    let out = '';
    let from = 0;
    for (let at = text.indexOf(this.#start); at >= 0; at = text.indexOf(this.#start, from)) {
      let end = at + this.#start.length;
      while (end - at < this.#key.length && text[end] === this.#key[end - at]) end++;
      out += text.slice(from, at) + REDACTED;
      from = end;
    }
    return out + text.slice(from);
  }

  /**
   * `cause` itself when nothing reachable from it quotes the key; otherwise a copy of the path to
   * every quote: each Error on it rebuilt with its class (so `instanceof TypeError` and
   * AggregateError's `errors` still hold), name, message, stack and `code` scrubbed, its `cause`
   * and `errors` copied the same way, other properties and non-Error causes that quote it dropped.
   */
  error(cause: unknown): unknown {
    return this.scrubbed(cause, 0);
  }

  /** `value` when nothing reachable from it quotes the key; else its copy (undefined: dropped). */
  private scrubbed(value: unknown, depth: number): unknown {
    return this.quotes(value, new WeakSet(), depth) ? this.copy(value, depth) : value;
  }

  /** A copy of `value`, which quotes the key (see `error`). */
  private copy(value: unknown, depth: number): unknown {
    if (typeof value === 'string') return this.text(value);
    if (!(value instanceof Error) || depth >= MAX_DEPTH) return undefined;
    const inner = this.scrubbed(value.cause, depth + 1);
    const options = inner === undefined ? undefined : { cause: inner };
    const message = this.text(value.message);
    const aggregate = value instanceof AggregateError;
    const errors = aggregate
      ? (value.errors as unknown[]).map((e) => this.scrubbed(e, depth + 1)).filter((e) => e !== undefined)
      : [];
    const ctor = value.constructor;
    const target =
      typeof ctor === 'function' && ctor.prototype === Object.getPrototypeOf(value) ? ctor : undefined;
    // A real error object of the same class, made without running the class's own constructor.
    const copy = (
      aggregate
        ? Reflect.construct(AggregateError, [errors, message, options], target ?? AggregateError)
        : Reflect.construct(Error, [message, options], target ?? Error)
    ) as Error & { code?: unknown };
    if (Object.prototype.hasOwnProperty.call(value, 'name')) copy.name = this.text(String(value.name));
    if (typeof value.stack === 'string') copy.stack = this.text(value.stack);
    const code: unknown = (value as { code?: unknown }).code;
    if (typeof code === 'string') copy.code = this.text(code);
    else if (typeof code === 'number') copy.code = code;
    return copy;
  }

  /** Whether the key (or a run of its start) is in `value` or anything reachable from it. */
  private quotes(value: unknown, seen: WeakSet<object>, depth: number): boolean {
    if (typeof value === 'string') return this.text(value) !== value;
    if (typeof value !== 'object' || value === null) return false;
    if (seen.has(value)) return false;
    seen.add(value);
    if (depth >= MAX_DEPTH) return true;
    try {
      const own: unknown[] = Object.values(value);
      if (value instanceof Error) {
        own.push(value.name, value.message, value.stack, (value as { cause?: unknown }).cause);
        if (value instanceof AggregateError) own.push(value.errors);
      }
      return own.some((v) => this.quotes(v, seen, depth + 1));
    } catch {
      return true; // a getter that throws: cannot tell, so treat it as quoting
    }
  }
}
