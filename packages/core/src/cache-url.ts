import { CACHES, type AmpCache, findCache } from './caches.js';
import { domainPrefix } from './domain-prefix.js';
import { AmpCorsError } from './errors.js';

/**
 * Serving types of a cache URL (SPEC §3): `c` content, `v` viewer, `wp` web
 * package (signed exchange), `cert` signed-exchange certificate, `i` image,
 * `ii` image with parameters (`/ii/w800`), `r` resource such as a font.
 */
export type ServingType = 'c' | 'v' | 'wp' | 'cert' | 'i' | 'ii' | 'r';

const SERVING_TYPES: ReadonlySet<string> = new Set<ServingType>(['c', 'v', 'wp', 'cert', 'i', 'ii', 'r']);
const IMAGE_EXTENSIONS = new Set(['apng', 'avif', 'bmp', 'gif', 'ico', 'jpeg', 'jpg', 'jfif', 'png', 'svg', 'tif', 'tiff', 'webp']);
const FONT_EXTENSIONS = new Set(['eot', 'otf', 'ttc', 'ttf', 'woff', 'woff2']);

function resolveCache(cache: AmpCache | string | undefined): AmpCache {
  if (cache === undefined) return CACHES[0] as AmpCache;
  if (typeof cache !== 'string') return cache;
  const found = findCache(cache);
  if (!found) throw new AmpCorsError('invalid-cache', `Unknown cache id ${JSON.stringify(cache)} (known: ${CACHES.map((c) => c.id).join(', ')})`);
  return found;
}

/**
 * The cache origin of a publisher domain: `https://<domain-prefix>.<cacheDomain>`
 * (SPEC §1–2). `cache` is an entry or a bundled cache id (default: Google's).
 *
 * @throws AmpCorsError `invalid-domain` or `invalid-cache`.
 * @example cacheOrigin('www.example.com') // 'https://www-example-com.cdn.ampproject.org'
 * @example cacheOrigin('www.example.com', 'bing') // 'https://www-example-com.www.bing-amp.com'
 */
export function cacheOrigin(publisherDomain: string, cache?: AmpCache | string): string {
  return `https://${domainPrefix(publisherDomain)}.${resolveCache(cache).cacheDomain}`;
}

/** Options of {@link cacheUrl}. */
export interface CacheUrlOptions {
  /** The cache (entry or bundled id; default Google's). */
  readonly cache?: AmpCache | string;
  /**
   * The serving type. Default: `i` for image file names, `r` for font file
   * names, else `c`.
   */
  readonly servingType?: ServingType;
  /** Maximum width for `ii` (`/ii/w<width>`); required with `ii`, refused otherwise. */
  readonly width?: number;
}

function defaultServingType(pathname: string): ServingType {
  const dot = pathname.lastIndexOf('.');
  if (dot < 0 || dot < pathname.lastIndexOf('/')) return 'c';
  const extension = pathname.slice(dot + 1).toLowerCase();
  if (IMAGE_EXTENSIONS.has(extension)) return 'i';
  if (FONT_EXTENSIONS.has(extension)) return 'r';
  return 'c';
}

/**
 * The AMP cache URL of a publisher URL (SPEC §3):
 * `https://<prefix>.<cacheDomain>/<type>[/<params>][/s]/<host><path>[?query][#fragment]`.
 * `/s` marks an https publisher URL; the query is kept; a bare root path is
 * not written (`https://example.com/` → `…/c/s/example.com`).
 *
 * @throws AmpCorsError `invalid-url` for anything but an absolute http(s) URL
 *   on the default port without userinfo; `invalid-option` for a bad serving
 *   type or width; `invalid-domain` for a host that is not a domain.
 * @example cacheUrl('https://example.com/amp_document.html')
 *   // 'https://example-com.cdn.ampproject.org/c/s/example.com/amp_document.html'
 * @example cacheUrl('https://example.com/a.jpg', { servingType: 'ii', width: 800 })
 *   // 'https://example-com.cdn.ampproject.org/ii/w800/s/example.com/a.jpg'
 */
export function cacheUrl(publisherUrl: string, options: CacheUrlOptions = {}): string {
  if (typeof publisherUrl !== 'string' || !/^https?:\/\//i.test(publisherUrl)) {
    throw new AmpCorsError('invalid-url', `Not an absolute http(s) URL: ${JSON.stringify(String(publisherUrl).slice(0, 200))}`);
  }
  let url: URL;
  try {
    url = new URL(publisherUrl);
  } catch {
    throw new AmpCorsError('invalid-url', `Not a valid URL: ${JSON.stringify(publisherUrl.slice(0, 200))}`);
  }
  if (url.username !== '' || url.password !== '') throw new AmpCorsError('invalid-url', 'A publisher URL with userinfo has no cache URL');
  if (url.port !== '') throw new AmpCorsError('invalid-url', `A publisher URL on a non-default port (${url.port}) has no cache URL`);
  const type = options.servingType ?? defaultServingType(url.pathname);
  if (!SERVING_TYPES.has(type)) throw new AmpCorsError('invalid-option', `Unknown serving type ${JSON.stringify(type)}`);
  let params = '';
  if (type === 'ii') {
    const width = options.width;
    if (width === undefined || !Number.isSafeInteger(width) || width <= 0) {
      throw new AmpCorsError('invalid-option', 'Serving type ii needs a positive integer width');
    }
    params = `/w${width}`;
  } else if (options.width !== undefined) {
    throw new AmpCorsError('invalid-option', 'width applies only to serving type ii');
  }
  const secure = url.protocol === 'https:' ? '/s' : '';
  const prefix = domainPrefix(url.hostname);
  const path = url.pathname === '/' ? '' : url.pathname;
  return `https://${prefix}.${resolveCache(options.cache).cacheDomain}/${type}${params}${secure}/${url.hostname}${path}${url.search}${url.hash}`;
}
