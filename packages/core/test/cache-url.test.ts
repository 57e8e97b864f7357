import { describe, expect, it } from 'vitest';
import { AmpCorsError, cacheOrigin, cacheUrl } from '../src/index.js';

describe('cacheUrl (SPEC §3)', () => {
  it.each([
    ['https://example.com/amp_document.html', {}, 'https://example-com.cdn.ampproject.org/c/s/example.com/amp_document.html'],
    ['http://example.com/logo.png', {}, 'https://example-com.cdn.ampproject.org/i/example.com/logo.png'],
    ['https://example.com/f.woff2', {}, 'https://example-com.cdn.ampproject.org/r/s/example.com/f.woff2'],
    ['https://example.com/a', { servingType: 'v' }, 'https://example-com.cdn.ampproject.org/v/s/example.com/a'],
    ['https://example.com/a', { servingType: 'wp' }, 'https://example-com.cdn.ampproject.org/wp/s/example.com/a'],
    ['https://example.com/cert', { servingType: 'cert' }, 'https://example-com.cdn.ampproject.org/cert/s/example.com/cert'],
    ['https://example.com/a.jpg', { servingType: 'ii', width: 800 }, 'https://example-com.cdn.ampproject.org/ii/w800/s/example.com/a.jpg'],
    ['https://example.com/g?value=Hello%20World', {}, 'https://example-com.cdn.ampproject.org/c/s/example.com/g?value=Hello%20World'],
    ['https://example.com/', { cache: 'bing' }, 'https://example-com.www.bing-amp.com/c/s/example.com'],
    ['https://EXAMPLE.com:443/x', {}, 'https://example-com.cdn.ampproject.org/c/s/example.com/x'],
  ] as const)('%s %o', (url, options, expected) => {
    expect(cacheUrl(url, options)).toBe(expected);
  });
  it.each([
    ['ftp://example.com/', 'invalid-url'],
    ['//example.com/', 'invalid-url'],
    ['example.com', 'invalid-url'],
    ['https://user:pw@example.com/', 'invalid-url'],
    ['https://example.com:8443/', 'invalid-url'],
    ['https://[::1]/', 'invalid-domain'],
    ['https://127.0.0.1/', 'invalid-domain'],
  ])('%s is refused (%s)', (url, code) => {
    expect(() => cacheUrl(url)).toThrow(expect.objectContaining({ code }));
  });
  it('validates the serving type and width', () => {
    expect(() => cacheUrl('https://a.com/', { servingType: 'ii' })).toThrow(AmpCorsError);
    expect(() => cacheUrl('https://a.com/', { servingType: 'ii', width: -1 })).toThrow(AmpCorsError);
    expect(() => cacheUrl('https://a.com/', { servingType: 'c', width: 10 })).toThrow(AmpCorsError);
    expect(() => cacheUrl('https://a.com/', { servingType: 'x' as never })).toThrow(AmpCorsError);
    expect(() => cacheUrl('https://a.com/', { cache: 'nope' })).toThrow(expect.objectContaining({ code: 'invalid-cache' }));
  });
  it('cacheOrigin on each bundled cache', () => {
    expect(cacheOrigin('www.example.com')).toBe('https://www-example-com.cdn.ampproject.org');
    expect(cacheOrigin('www.example.com', 'bing')).toBe('https://www-example-com.www.bing-amp.com');
  });
});
