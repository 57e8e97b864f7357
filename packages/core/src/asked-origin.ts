/**
 * What a guard's question request shows of its origin (attacker's review,
 * session 15: helper-55). The guards ask an origin function or an options
 * delegate about the request made about another origin (a canary, a
 * look-alike). A question that replaced only the `Origin` header let a
 * function echoing the origin from elsewhere in the request (the
 * `__amp_source_origin` query parameter, the `Referer`) answer the real
 * origin to every question, so it passed, and every site read credentialed
 * responses. A question request therefore carries the asked origin wherever
 * the request shows the real one:
 *
 * 1. Header values (not `Host`, `:authority`, nor `Cookie`, see 4): every
 *    occurrence of the real origin, in any case, becomes the asked origin,
 *    and every occurrence of its host the asked host (so a `Referer`'s
 *    origin part, written `https://EVIL.example.net:443/page` or not, is the
 *    asked one). The proxy headers naming the server's own host
 *    (`X-Forwarded-Host`, `Forwarded`, …) only have the origin replaced: a
 *    function allowing its own origin (`origin === req.protocol + '://' +
 *    req.hostname`) must not be made to allow the question's.
 * 2. URL components (a query parameter's name or value, a path segment, a
 *    route parameter), decoded up to {@link MAX_DECODES} times (`+` as a
 *    space in a query, lenient `%` decoding, as Node's `querystring` is):
 *    the first level at which the real origin or host shows is replaced and
 *    encoded back as many times, so `%65vil.example.net`, `%2565vil…` and
 *    `EVIL.Example.NET` all become the asked host at the level a function
 *    reads. A value whose NFKC form, with the ideographic full stops as `.`
 *    and tabs and line breaks removed (what a URL parser makes of a host),
 *    shows the real host is replaced in that form.
 * 3. Never the asked origin itself: a look-alike may contain the real host
 *    (`https://www.example.com.<canary>`), and its occurrences are skipped,
 *    not replaced again.
 * 4. Why this never makes a correct function allow a question: a function
 *    allowing a fixed set of origins allows none of the canaries and
 *    look-alikes whatever the request says (a list naming a look-alike is
 *    confirmed, see delegate-guard.ts), and what a function may legitimately
 *    compare the origin with (the server's own `Host`, a cookie the server
 *    set after checking it) is left as it is.
 *
 * Not replaced: an origin assembled from pieces none of which holds the real
 * host (`${q.sub}.example.net`), an IP address written in another notation
 * than the real one, a body, cookies (see 4), data found by a key (a session,
 * a database).
 */
import { parseOrigin } from './origin-header.js';

/** 2. How many times a URL component is decoded to look for the real origin (the framework's decoding, and a function's own, twice). */
const MAX_DECODES = 3;
/** 2. How many replacements one value gets at most (each one at the first level still showing the real origin). */
const MAX_ROUNDS = 4;

/** 1. Headers never rewritten: the server's own host, and cookies the server set (4). */
const UNTOUCHED_HEADERS: ReadonlySet<string> = new Set(['host', ':authority', 'cookie']);
/** 1. Proxy headers naming the server's own host: only the real origin is replaced in them, never its host. */
const OWN_HOST_HEADERS: ReadonlySet<string> = new Set(['x-forwarded-host', 'forwarded', 'x-forwarded-server', 'x-host', 'x-original-host']);

/** 2. What a URL parser would strip or map in a host: characters that make {@link urlForm} differ from the text. */
const NOT_PLAIN = /[^\x20-\x7e]/;

/** 2. A value as a URL parser reads a host in it: NFKC, ideographic full stops as `.`, tabs and line breaks removed, lower case. */
function urlForm(text: string): string {
  return text
    .normalize('NFKC')
    .replace(/[\u3002\uff0e\uff61]/g, '.')
    .replace(/[\t\n\r]/g, '')
    .toLowerCase();
}

/** A RegExp source matching `text` literally. */
function literal(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
}

/** 2. One decoding of a URL component; an invalid sequence run stays as it is, but its ASCII escapes are decoded (as Node's `querystring` does). */
function decodeLeniently(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text.replace(/(?:%[0-9A-Fa-f]{2})+/g, (run) => {
      try {
        return decodeURIComponent(run);
      } catch {
        return run.replace(/%[0-7][0-9A-Fa-f]/g, (escape) => String.fromCharCode(Number.parseInt(escape.slice(1), 16)));
      }
    });
  }
}

/** Rewrites what a request shows of its real origin into an asked origin (see the file comment). */
export interface OriginRewriter {
  /** 1. A header value (`name` in lower case) about the asked origin; the `Origin` header itself is the caller's. */
  header(name: string, value: string): string;
  /** 2. A request target (a path with its query, or an absolute URL whose scheme and authority stay) about the asked origin. */
  url(url: string): string;
  /** 2. A decoded string (a parsed query value, a route parameter) about the asked origin. */
  text(value: string): string;
  /** 2. `value` with every string in it (through arrays and plain objects, keys included) rewritten by {@link OriginRewriter.text}; `value` itself when none changed. */
  deep<T>(value: T): T;
}

/** The parts of an origin replaced. */
interface Parts {
  readonly origin: string;
  readonly host: string;
}

/** An origin and its host, or `null` when `origin` is no canonical origin. */
function partsOf(origin: string | null | undefined): Parts | null {
  const parsed = parseOrigin(origin);
  return parsed.ok ? { origin: origin as string, host: parsed.host } : null;
}

/**
 * The rewriter from the request's real `Origin` to `asked`, or `null` when
 * either is no canonical origin or they are the same (then only the
 * `Origin` header differs).
 *
 * @param real - the request's `Origin` header
 * @param asked - the origin the question is about
 */
export function originRewriter(real: string | null | undefined, asked: string): OriginRewriter | null {
  if (typeof real !== 'string' || real === asked) return null;
  const key = `${real} ${asked}`;
  let rewriter = rewriters.get(key);
  if (rewriter !== undefined) return rewriter;
  const from = partsOf(real);
  const to = partsOf(asked);
  if (from === null || to === null) return null;
  rewriter = new Rewriter(from, to);
  // Bounded: the real origin is one the function allowed, the asked ones the guard's; the oldest pair goes first.
  if (rewriters.size >= MAX_REWRITERS) rewriters.delete(rewriters.keys().next().value as string);
  rewriters.set(key, rewriter);
  return rewriter;
}

/** How many rewriters {@link originRewriter} keeps (their RegExps cost more to build than the questions of a request). */
const MAX_REWRITERS = 256;
/** Rewriters by `real asked` (a space never appears in an origin), oldest first. */
const rewriters = new Map<string, Rewriter>();

/** How deeply {@link Rewriter.deep} walks (a parsed query is at most a few levels deep). */
const MAX_DEPTH = 16;

class Rewriter implements OriginRewriter {
  /** 3. The asked origin and host first (skipped), then the real ones, longest first at each position. */
  private readonly withHost: RegExp;
  private readonly originOnly: RegExp;
  /** A quick test: whether a text may show the real host at all (plainly, escaped, or in another form). */
  private readonly hint: RegExp;
  private readonly substitute: (match: string) => string;

  constructor(from: Parts, to: Parts) {
    const both = (names: readonly string[]) =>
      new RegExp(
        [...names]
          .sort((a, b) => b.length - a.length)
          .map(literal)
          .join('|'),
        'gi',
      );
    this.withHost = both([to.origin, to.host, from.origin, from.host]);
    this.originOnly = both([to.origin, from.origin]);
    this.hint = new RegExp(`${literal(from.host)}|%|[^\\x20-\\x7e]`, 'i');
    const realOrigin = from.origin;
    const realHost = from.host;
    this.substitute = (match) => {
      const lower = match.toLowerCase();
      return lower === realOrigin ? to.origin : lower === realHost ? to.host : match;
    };
  }

  /** 2–3. `text` with the real origin (and host) replaced, in its URL form when only that shows it; `text` itself when it shows neither. */
  private replaced(text: string, host: boolean): string {
    const pattern = host ? this.withHost : this.originOnly;
    const plain = text.replace(pattern, this.substitute);
    if (!NOT_PLAIN.test(plain)) return plain;
    const form = urlForm(plain);
    const replaced = form.replace(pattern, this.substitute);
    return replaced === form ? plain : replaced;
  }

  /** 2. A URL component (or header value) about the asked origin: replaced at the first decoding level that shows the real one, encoded back. */
  private component(raw: string, plus: boolean, host: boolean): string {
    if (!this.hint.test(raw)) return raw;
    let text = raw;
    for (let round = 0; round < MAX_ROUNDS; round++) {
      let level = text;
      let depth = 0;
      let replaced = this.replaced(level, host);
      while (replaced === level && depth < MAX_DECODES && level.includes('%')) {
        const next = decodeLeniently(plus && depth === 0 ? level.replace(/\+/g, ' ') : level);
        if (next === level) break;
        level = next;
        depth += 1;
        replaced = this.replaced(level, host);
      }
      if (replaced === level) return text;
      for (let times = 0; times < depth; times++) replaced = encodeURIComponent(replaced);
      text = replaced;
      // Replaced at the only level there is (no escape, no character a URL parser maps): nothing else can show the real origin.
      if (!text.includes('%') && !NOT_PLAIN.test(text)) return text;
    }
    return text;
  }

  header(name: string, value: string): string {
    if (UNTOUCHED_HEADERS.has(name)) return value;
    return this.component(value, false, !OWN_HOST_HEADERS.has(name));
  }

  /** The last URL rewritten, and what it became (a question's views of the URL, and the next request's questions, ask for it again). */
  private lastUrl = '';
  private lastUrlAbout = '';

  url(url: string): string {
    if (url === this.lastUrl) return this.lastUrlAbout;
    const about = this.urlOnce(url);
    this.lastUrl = url;
    this.lastUrlAbout = about;
    return about;
  }

  /** {@link OriginRewriter.url}, computed. */
  private urlOnce(url: string): string {
    // An absolute target's scheme and authority are the server's own (as Host): only its path and query are rewritten.
    const authority = url.startsWith('/') ? -1 : url.indexOf('//');
    const pathStart = authority < 0 ? 0 : url.indexOf('/', authority + 2);
    if (pathStart < 0) return url;
    const queryStart = url.indexOf('?', pathStart);
    const path = url.slice(pathStart, queryStart < 0 ? undefined : queryStart);
    const segments = path.split('/');
    const pathAbout = segments.map((segment) => this.component(segment, false, true)).join('/');
    let query = '';
    if (queryStart >= 0) {
      const parts = url.slice(queryStart + 1).split('&');
      query = `?${parts
        .map((part) => {
          const equals = part.indexOf('=');
          if (equals < 0) return this.component(part, true, true);
          return `${this.component(part.slice(0, equals), true, true)}=${this.component(part.slice(equals + 1), true, true)}`;
        })
        .join('&')}`;
    }
    return `${url.slice(0, pathStart)}${pathAbout}${query}`;
  }

  text(value: string): string {
    return this.component(value, false, true);
  }

  deep<T>(value: T): T {
    return this.walk(value, 0) as T;
  }

  /** {@link OriginRewriter.deep} at `depth`: strings rewritten, arrays and plain objects copied only when something in them changed. */
  private walk(value: unknown, depth: number): unknown {
    if (typeof value === 'string') return this.text(value);
    if (typeof value !== 'object' || value === null || depth >= MAX_DEPTH) return value;
    if (Array.isArray(value)) {
      let copy: unknown[] | null = null;
      for (let at = 0; at < value.length; at++) {
        const item: unknown = value[at];
        const about = this.walk(item, depth + 1);
        if (about !== item) (copy ??= [...value])[at] = about;
      }
      return copy ?? value;
    }
    const prototype = Object.getPrototypeOf(value) as object | null;
    if (prototype !== Object.prototype && prototype !== null) return value;
    let copy: Record<string, unknown> | null = null;
    for (const key of Object.keys(value)) {
      const item: unknown = (value as Record<string, unknown>)[key];
      const name = this.text(key);
      const about = this.walk(item, depth + 1);
      if (name === key && about === item) continue;
      copy ??= Object.create(prototype, Object.getOwnPropertyDescriptors(value)) as Record<string, unknown>;
      if (name !== key) delete copy[key];
      // Defined, not assigned: a `__proto__` key stays a key.
      Object.defineProperty(copy, name, { value: about, writable: true, enumerable: true, configurable: true });
    }
    return copy ?? value;
  }
}

/**
 * A property of a question's view computed when first read (most functions
 * read little of the request, and a request is asked about many origins):
 * `compute()` then; what the function writes stays on the view.
 */
export function lazyProperty(compute: () => unknown): PropertyDescriptor {
  let value: unknown;
  let read = false;
  return {
    get: () => {
      if (!read) value = compute();
      read = true;
      return value;
    },
    set: (given: unknown) => {
      value = given;
      read = true;
    },
    enumerable: true,
    configurable: true,
  };
}
