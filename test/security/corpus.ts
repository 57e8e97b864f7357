/**
 * The adversarial `Origin` corpus (issue #6): raw header values with the
 * verdict and reason code that ampcors must give for {@link CORPUS_CONFIG}.
 * Every expectation was derived from SPEC §4, §6 and §7 by hand, not by
 * running the verifier. Values whose punycode or hash is not obvious carry a
 * note saying what they decode to.
 */
import type { AllowReason, DenyReason, VerifierConfig, VerifyContext } from '@ampcors/core';

/** A 73-octet publisher domain: its basic prefix is longer than 63, so every cache hashes it. */
export const LONG_DOMAIN = `${'a'.repeat(30)}.${'b'.repeat(30)}.example.net`;
/** base32(SHA-256(LONG_DOMAIN)) without padding, computed independently with `node:crypto`. */
export const LONG_DOMAIN_HASH = 'bcqzqqc5ch7sxozdddl6bmxwuh32gti635uny2hxdhaanyceosaa';
/** Hash prefixes of `bücher.de` in ASCII (`xn--bcher-kva.de`) and Unicode form. */
export const BUCHER_HASH_ASCII = '3634xlxxhwmbfso3ycwi4mpmlr73ftpckucmffmi5irso4jlfw2q';
export const BUCHER_HASH_UNICODE = '3zu3xqu2lg6b6s7cmjcnpu4ymtpcwvcmndrl6e2rduqqdlzhvkbq';

/**
 * The stated configuration: two exact domains on one registrable domain, a
 * wildcard, a domain that is always hashed, an IDN and a domain whose prefix
 * takes the `0-…-0` wrap. Default `origins` (https, default port).
 */
export const CORPUS_CONFIG: VerifierConfig = {
  publishers: ['example.com', 'www.example.com', '*.example.org', LONG_DOMAIN, 'bücher.de', 'en-us.example.net'],
};

/** The class of attack (or positive control) an entry belongs to. */
export type CorpusClass =
  | 'allowed'
  | 'suffix-prefix-lookalike'
  | 'cache-lookalike'
  | 'other-publisher-cache-origin'
  | 'trailing-dot-hyphen'
  | 'zero-wrap'
  | 'hashed'
  | 'homograph-fullwidth-softhyphen'
  | 'ip'
  | 'userinfo'
  | 'path'
  | 'port'
  | 'scheme'
  | 'null'
  | 'list'
  | 'whitespace-control'
  | 'invalid-punycode'
  | 'oversized'
  | 'context';

/** One corpus entry: the raw header (null: no `Origin` header) and the expected verdict. */
export interface CorpusEntry {
  readonly class: CorpusClass;
  readonly origin: string | null;
  readonly allowed: boolean;
  readonly reason: AllowReason | DenyReason;
  /** `AMP-Same-Origin` / `__amp_source_origin` sent with the request. */
  readonly context?: VerifyContext;
  /** What the value decodes to or why the verdict holds, when not obvious. */
  readonly note?: string;
}

const G = 'cdn.ampproject.org';
const B = 'www.bing-amp.com';
const ok = (c: CorpusClass, origin: string, reason: AllowReason, note?: string): CorpusEntry => ({
  class: c,
  origin,
  allowed: true,
  reason,
  ...(note ? { note } : {}),
});
const no = (c: CorpusClass, origin: string | null, reason: DenyReason, note?: string): CorpusEntry => ({
  class: c,
  origin,
  allowed: false,
  reason,
  ...(note ? { note } : {}),
});

/** The corpus. */
export const CORPUS: readonly CorpusEntry[] = [
  // Positive controls: without them a verifier that denies everything would pass.
  ok('allowed', `https://example-com.${G}`, 'cache-origin'),
  ok('allowed', `https://www-example-com.${G}`, 'cache-origin'),
  ok('allowed', `https://example-com.${B}`, 'cache-origin'),
  ok('allowed', `https://www-example-com.${B}`, 'cache-origin'),
  ok('allowed', 'https://example.com', 'publisher-origin'),
  ok('allowed', 'https://www.example.com', 'publisher-origin'),
  ok('allowed', 'https://example.org', 'publisher-origin', 'the base of *.example.org'),
  ok('allowed', 'https://a.b.example.org', 'publisher-origin'),
  ok('allowed', `https://example-org.${G}`, 'cache-origin-wildcard'),
  ok('allowed', `https://a-example-org.${G}`, 'cache-origin-wildcard'),
  ok('allowed', `https://evil-example-org.${B}`, 'cache-origin-wildcard', 'evil.example.org is under *.example.org'),
  ok('allowed', `https://a--b-example-org.${G}`, 'cache-origin-wildcard', 'a-b.example.org'),
  ok('allowed', `https://0-a-example-org.${G}`, 'cache-origin-wildcard', '0.a.example.org: a 0- start without -0 end is no wrap'),
  ok('allowed', `https://0-en--us-example-net-0.${G}`, 'cache-origin', 'en-us.example.net'),
  ok('allowed', `https://xn--bcher-de-65a.${G}`, 'cache-origin', 'bücher-de'),
  ok('allowed', 'https://xn--bcher-kva.de', 'publisher-origin'),
  ok('allowed', `https://${LONG_DOMAIN_HASH}.${G}`, 'cache-origin-hashed'),
  ok('allowed', `https://${LONG_DOMAIN_HASH}.${B}`, 'cache-origin-hashed'),
  ok('allowed', `https://${BUCHER_HASH_ASCII}.${G}`, 'cache-origin-hashed', 'hash of xn--bcher-kva.de'),
  ok('allowed', `https://${BUCHER_HASH_UNICODE}.${G}`, 'cache-origin-hashed', 'hash of bücher.de'),
  ok('allowed', `https://${LONG_DOMAIN}`, 'publisher-origin'),

  // Publisher-origin look-alikes.
  no('suffix-prefix-lookalike', 'https://example.com.evil.com', 'unknown-origin'),
  no('suffix-prefix-lookalike', 'https://www.example.com.evil.com', 'unknown-origin'),
  no('suffix-prefix-lookalike', 'https://evilexample.com', 'unknown-origin'),
  no('suffix-prefix-lookalike', 'https://evil-example.com', 'unknown-origin'),
  no('suffix-prefix-lookalike', 'https://evil.example.com', 'unknown-origin', 'example.com is exact, not a wildcard'),
  no('suffix-prefix-lookalike', 'https://wwww.example.com', 'unknown-origin'),
  no('suffix-prefix-lookalike', 'https://example.co', 'unknown-origin'),
  no('suffix-prefix-lookalike', 'https://example.comm', 'unknown-origin'),
  no('suffix-prefix-lookalike', 'https://example.com.au', 'unknown-origin'),
  no('suffix-prefix-lookalike', 'https://examplecom', 'unknown-origin'),
  no('suffix-prefix-lookalike', 'https://example', 'unknown-origin'),
  no('suffix-prefix-lookalike', 'https://com', 'unknown-origin'),
  no('suffix-prefix-lookalike', 'https://notexample.org', 'unknown-origin'),
  no('suffix-prefix-lookalike', 'https://example.org.evil.com', 'unknown-origin'),
  no('suffix-prefix-lookalike', 'https://a.example.org.evil.com', 'unknown-origin'),
  no('suffix-prefix-lookalike', 'https://example-org.com', 'unknown-origin'),
  no('suffix-prefix-lookalike', 'https://org', 'unknown-origin'),
  no('suffix-prefix-lookalike', 'https://en-us.example.net.evil.com', 'unknown-origin'),
  no('suffix-prefix-lookalike', 'https://example.net', 'unknown-origin', 'only en-us.example.net is configured'),
  no('suffix-prefix-lookalike', 'https://bucher.de', 'unknown-origin'),
  no('suffix-prefix-lookalike', 'https://exa_mple.com', 'unknown-origin'),

  // Look-alikes of the cache domains.
  no('cache-lookalike', `https://example-com.${G}.evil.com`, 'unknown-origin'),
  no('cache-lookalike', 'https://example-com.cdn-ampproject.org', 'unknown-origin'),
  no('cache-lookalike', 'https://example-com.ampproject.org', 'unknown-origin'),
  no('cache-lookalike', 'https://example-com.cdn.ampproject.net', 'unknown-origin'),
  no('cache-lookalike', 'https://example-com.cdn.ampproject.org.cdn.ampproject.com', 'unknown-origin'),
  no('cache-lookalike', 'https://example-comcdn.ampproject.org', 'unknown-origin', 'ends in cdn.ampproject.org without the dot'),
  no('cache-lookalike', 'https://example-com.bing-amp.com', 'unknown-origin', 'Bing serves from www.bing-amp.com (amphtml#27472)'),
  no('cache-lookalike', 'https://example-com.www.bing-amp.net', 'unknown-origin', 'the frame domain, not the cache domain'),
  no('cache-lookalike', 'https://example-com.ampproject.net', 'unknown-origin'),
  no('cache-lookalike', `https://${G}`, 'legacy-cache-origin'),
  no('cache-lookalike', `https://${B}`, 'legacy-cache-origin'),
  no('cache-lookalike', 'https://bing-amp.com', 'unknown-origin'),
  no('cache-lookalike', `https://a.example-com.${G}`, 'not-a-label'),
  no('cache-lookalike', `https://example.com.${G}`, 'not-a-label'),
  no('cache-lookalike', `https://www.example-com.${B}`, 'not-a-label'),
  no('cache-lookalike', `https://example-com.${G}.`, 'not-canonical'),
  no('cache-lookalike', `https://EXAMPLE-COM.${G}`, 'not-canonical'),
  no('cache-lookalike', 'https://example-com.CDN.AMPPROJECT.ORG', 'not-canonical'),

  // Other publishers' cache origins: reversible, but not ours.
  no('other-publisher-cache-origin', `https://evil-example-com.${G}`, 'unknown-publisher', 'evil.example.com'),
  no('other-publisher-cache-origin', `https://example-com-evil-com.${G}`, 'unknown-publisher', 'example.com.evil.com'),
  no('other-publisher-cache-origin', `https://example-comevil-com.${G}`, 'unknown-publisher'),
  no('other-publisher-cache-origin', `https://www-example-com-evil-com.${B}`, 'unknown-publisher'),
  no('other-publisher-cache-origin', `https://evil-com.${G}`, 'unknown-publisher'),
  no('other-publisher-cache-origin', `https://example--com.${G}`, 'invalid-domain', 'the one-label host example-com: no dotless host can exist (ICANN)'),
  no(
    'other-publisher-cache-origin',
    `https://example----com.${G}`,
    'unknown-publisher',
    'read every way: example-.-com, example.--com…; a browser host that could exist, not configured',
  ),
  no('other-publisher-cache-origin', `https://exampl-e-com.${G}`, 'unknown-publisher', 'exampl.e.com'),
  no('other-publisher-cache-origin', `https://www-example-co.${G}`, 'unknown-publisher'),
  no('other-publisher-cache-origin', `https://example-co-uk.${G}`, 'unknown-publisher'),
  no('other-publisher-cache-origin', `https://co-uk.${G}`, 'unknown-publisher'),
  no('other-publisher-cache-origin', `https://example-org-evil-com.${G}`, 'unknown-publisher', 'example.org.evil.com is not under *.example.org'),
  no('other-publisher-cache-origin', `https://xexample-org.${G}`, 'unknown-publisher'),
  no('other-publisher-cache-origin', `https://org-example.${G}`, 'unknown-publisher'),
  no('other-publisher-cache-origin', `https://example-net.${G}`, 'unknown-publisher'),
  no('other-publisher-cache-origin', `https://evil-en--us-example-net.${G}`, 'unknown-publisher', 'evil.en-us.example.net'),
  no('other-publisher-cache-origin', `https://example-com-cdn-ampproject-org.${G}`, 'unknown-publisher', 'example.com.cdn.ampproject.org'),
  no('other-publisher-cache-origin', `https://example-com--0.${G}`, 'invalid-domain', 'example.com-0: com-0 is no possible top-level domain'),
  no('other-publisher-cache-origin', `https://xn--bcher-de-65a.${G}.evil.com`, 'unknown-origin'),
  no(
    'other-publisher-cache-origin',
    `https://xn--bucher-de-hkf.${G}`,
    'unknown-publisher',
    "decomposed bu\u0308cher-de is not NFC (browsers refuse it), never bücher.de; read as plain ASCII it is toolbox's prefix of xn-bucher.de.hkf",
  ),

  // Trailing dots and hyphens, empty labels.
  no('trailing-dot-hyphen', 'https://example.com.', 'not-canonical'),
  no('trailing-dot-hyphen', 'https://www.example.com.', 'not-canonical'),
  no('trailing-dot-hyphen', 'https://example.com..', 'not-canonical'),
  no('trailing-dot-hyphen', 'https://.example.com', 'malformed'),
  no('trailing-dot-hyphen', 'https://example..com', 'malformed'),
  no('trailing-dot-hyphen', 'https://-example.com', 'malformed'),
  no('trailing-dot-hyphen', 'https://example-.com', 'malformed'),
  no('trailing-dot-hyphen', 'https://example.org.', 'not-canonical'),
  no('trailing-dot-hyphen', 'https://a.example.org.', 'not-canonical'),
  no('trailing-dot-hyphen', `https://example-com-.${G}`, 'malformed', 'would spell example.com. (SPEC §6)'),
  no('trailing-dot-hyphen', `https://-example-com.${G}`, 'malformed', 'would spell .example.com'),
  no('trailing-dot-hyphen', `https://example-com--.${G}`, 'malformed'),
  no('trailing-dot-hyphen', `https://example-org-.${G}`, 'malformed'),
  no('trailing-dot-hyphen', `https://example---com.${G}`, 'unknown-publisher', 'example-.com: an edge-hyphen browser host, not configured'),
  no('trailing-dot-hyphen', `https://example--.${G}`, 'malformed'),
  no('trailing-dot-hyphen', `https://example-com-x--.${G}`, 'malformed'),
  no('trailing-dot-hyphen', `https://a---b-example-org.${G}`, 'not-reproducible', 'a-.b.example.org: its own prefix is wrapped (0-a---b-example-org-0)'),
  no('trailing-dot-hyphen', `https://a-example-org---.${G}`, 'malformed'),

  // The 0-…-0 wrap.
  no('zero-wrap', `https://0-example-com-0.${G}`, 'not-reproducible', 'unwraps to example.com, whose prefix is example-com'),
  no('zero-wrap', `https://0-www-example-com-0.${G}`, 'not-reproducible'),
  no('zero-wrap', `https://0-example-org-0.${G}`, 'not-reproducible', 'example.org is under the wildcard, but its prefix is example-org'),
  no('zero-wrap', `https://0-a-example-org-0.${G}`, 'not-reproducible'),
  no('zero-wrap', `https://en--us-example-net.${G}`, 'not-reproducible', 'en-us.example.net without the required wrap'),
  no('zero-wrap', `https://0-0-en--us-example-net-0-0.${G}`, 'invalid-domain', 'unwraps once to 0.en-us.example.net.0 (numeric last label)'),
  no('zero-wrap', `https://0-en--us-example-net-0-0.${G}`, 'invalid-domain', 'en-us.example.net.0'),
  no('zero-wrap', `https://0-0-en--us-example-net-0.${G}`, 'not-reproducible', 'unwraps to 0.en-us.example.net, whose prefix has no wrap'),
  no('zero-wrap', `https://0-en--us-example-net.${G}`, 'unknown-publisher', '0.en-us.example.net'),
  no('zero-wrap', `https://en--us-example-net-0.${G}`, 'invalid-domain', 'en-us.example.net.0'),
  no('zero-wrap', `https://0--0.${G}`, 'invalid-domain', 'unwraps to the empty name'),
  no('zero-wrap', `https://0-0.${G}`, 'invalid-domain', 'too short to unwrap: 0.0, numeric'),
  ok('zero-wrap', `https://0-en--us-example-org-0.${G}`, 'cache-origin-wildcard', 'en-us.example.org, under *.example.org'),

  // Hashed prefixes.
  no('hashed', `https://${LONG_DOMAIN_HASH.toUpperCase()}.${G}`, 'not-canonical'),
  no('hashed', `https://${LONG_DOMAIN_HASH.slice(0, -1)}b.${G}`, 'hashed-unknown', 'one character changed'),
  no('hashed', `https://${LONG_DOMAIN_HASH.slice(0, -1)}.${G}`, 'hashed-unknown', 'one character short'),
  no('hashed', `https://${LONG_DOMAIN_HASH}a.${G}`, 'hashed-unknown', 'one character long'),
  ok(
    'hashed',
    `https://un42n5xov642kxrxrqiyanhcoupgql5lt4wtbkyt2ijflbwodfdq.${G}`,
    'cache-origin-hashed',
    'hash of example.com: accepted for every configured domain (caches hashed more names in the past, SPEC §6)',
  ),
  no('hashed', `https://dbt3jgv6e22rfui4wrjjjza27jxxfbuxoblrjei4lqabc6px6k5q.${G}`, 'hashed-unknown', 'hash of evil.com'),
  no(
    'hashed',
    `https://yntmmgzophr55furavwijernhshfllz7ozg3htwczu3it2s32sna.${G}`,
    'hashed-unknown',
    'toolbox hash of in--trouble.example.org: under the wildcard, but a hash cannot be reversed (SECURITY.md)',
  ),
  no('hashed', `https://examplecom.${G}`, 'hashed-unknown'),
  no('hashed', `https://com.${G}`, 'hashed-unknown'),
  no('hashed', `https://example_com.${G}`, 'hashed-unknown'),
  no('hashed', `https://${LONG_DOMAIN_HASH}.${G}.evil.com`, 'unknown-origin'),
  no('hashed', `http://${LONG_DOMAIN_HASH}.${G}`, 'insecure-scheme'),
  no('hashed', `https://${LONG_DOMAIN_HASH}.${G}:444`, 'non-default-port'),
  no('hashed', `https://${LONG_DOMAIN_HASH}.bing-amp.com`, 'unknown-origin'),

  // Homographs, full-width, soft hyphen and other invisible characters.
  no('homograph-fullwidth-softhyphen', 'https://ex\u0430mple.com', 'not-canonical', 'Cyrillic а, sent raw'),
  no('homograph-fullwidth-softhyphen', 'https://xn--exmple-4nf.com', 'unknown-origin', 'exаmple.com with Cyrillic а'),
  no('homograph-fullwidth-softhyphen', `https://xn--exmple-com-0qi.${G}`, 'unknown-publisher', 'exаmple-com with Cyrillic а'),
  no('homograph-fullwidth-softhyphen', `https://xn--www-exmple-com-0tl.${G}`, 'unknown-publisher', 'www-exаmple-com with Cyrillic а'),
  no('homograph-fullwidth-softhyphen', `https://xn--exmple-org-0qi.${G}`, 'unknown-publisher', 'exаmple-org with Cyrillic а'),
  no('homograph-fullwidth-softhyphen', 'https://\uff45\uff58\uff41\uff4d\uff50\uff4c\uff45.com', 'not-canonical', 'full-width letters, raw'),
  no('homograph-fullwidth-softhyphen', 'https://example\uff0ecom', 'not-canonical', 'full-width dot, raw'),
  no('homograph-fullwidth-softhyphen', 'https://example\u3002com', 'not-canonical', 'ideographic full stop, raw'),
  no(
    'homograph-fullwidth-softhyphen',
    `https://xn---com-zg0yxab9ci4a9f.${G}`,
    'invalid-domain',
    'full-width ｅｘａｍｐｌｅ-com: an A-label of characters UTS #46 maps is no browser host',
  ),
  no(
    'homograph-fullwidth-softhyphen',
    `https://xn--examplecom-7f99c.${G}`,
    'not-reproducible',
    'example．com: IDNA maps the full-width dot to example.com, whose prefix differs',
  ),
  no('homograph-fullwidth-softhyphen', `https://xn--examplecom-th3i.${G}`, 'not-reproducible', 'example。com (ideographic full stop)'),
  no('homograph-fullwidth-softhyphen', `https://xn--wwwexamplecom-r085eha.${G}`, 'not-reproducible', 'www．example．com'),
  no('homograph-fullwidth-softhyphen', 'https://exam\u00adple.com', 'not-canonical', 'soft hyphen, raw'),
  no(
    'homograph-fullwidth-softhyphen',
    `https://xn--example-com-tpa.${G}`,
    'unknown-publisher',
    "exam\u00adple-com (soft hyphen: no domain); read as plain ASCII, toolbox's prefix of xn-example.com.tpa",
  ),
  no('homograph-fullwidth-softhyphen', `https://xn--example-com-5d3f.${G}`, 'invalid-domain', 'example-com + zero-width space'),
  no('homograph-fullwidth-softhyphen', `https://xn--example-com-9d3f.${G}`, 'invalid-domain', 'exa + ZWNJ + mple-com'),
  no(
    'homograph-fullwidth-softhyphen',
    `https://xn--example-om-n39e.${G}`,
    'invalid-domain',
    'example-ⅽom (small roman numeral c, which UTS #46 maps: no browser host)',
  ),
  no(
    'homograph-fullwidth-softhyphen',
    `https://xn---en--us-example-net-0-0m48i.${G}`,
    'invalid-domain',
    'full-width ０ is no wrap: spells ０.en-us.example.net.0 (numeric last label)',
  ),
  no('homograph-fullwidth-softhyphen', 'https://example.com\u200b', 'not-canonical', 'zero-width space, raw'),
  no('homograph-fullwidth-softhyphen', 'https://example.com\ufeff', 'not-canonical', 'BOM, raw'),

  // IP addresses.
  no('ip', 'https://127.0.0.1', 'unknown-origin'),
  no('ip', 'https://93.184.216.34', 'unknown-origin'),
  no('ip', 'https://2130706433', 'not-canonical', 'decimal IPv4'),
  no('ip', 'https://0x7f.0.0.1', 'not-canonical', 'hex IPv4'),
  no('ip', 'https://0x7f000001', 'not-canonical'),
  no('ip', 'https://0177.0.0.1', 'not-canonical', 'octal IPv4'),
  no('ip', 'https://127.1', 'not-canonical', 'short IPv4'),
  no('ip', 'https://1.2.3.04', 'not-canonical'),
  no('ip', 'https://256.1.1.1', 'not-canonical'),
  no('ip', 'https://[::1]', 'unknown-origin'),
  no('ip', 'https://[::1]:8080', 'unknown-origin'),
  no('ip', 'https://[::FFFF:127.0.0.1]', 'not-canonical'),
  no('ip', 'https://[::1', 'malformed'),
  no('ip', 'https://[example.com]', 'malformed'),
  no('ip', 'https://[::1]x', 'malformed'),
  no('ip', `https://1.2.3.4.${G}`, 'not-a-label'),
  no('ip', `https://93-184-216-34.${G}`, 'invalid-domain', '93.184.216.34 is an address, not a domain'),
  no('ip', `https://127-0-0-1.${G}`, 'invalid-domain'),

  // Userinfo.
  no('userinfo', 'https://user@example.com', 'userinfo'),
  no('userinfo', 'https://user:pass@example.com', 'userinfo'),
  no('userinfo', 'https://example.com@evil.com', 'userinfo'),
  no('userinfo', `https://example-com.${G}@evil.com`, 'userinfo'),
  no('userinfo', `https://evil.com@example-com.${G}`, 'userinfo'),
  no('userinfo', 'https://@example.com', 'userinfo'),

  // Paths, queries, fragments.
  no('path', 'https://example.com/', 'path'),
  no('path', `https://example-com.${G}/`, 'path'),
  no('path', 'https://example.com/path', 'path'),
  no('path', 'https://example.com?x=1', 'path'),
  no('path', 'https://example.com#frag', 'path'),
  no('path', 'https://evil.com/https://example.com', 'path'),
  no('path', 'https://example.com\\evil.com', 'path'),
  no('path', 'https:///example.com', 'path'),
  no('path', `https://evil.com?__amp_source_origin=https://example.com`, 'path'),

  // Ports.
  no('port', 'https://example.com:443', 'not-canonical'),
  no('port', 'https://example.com:8443', 'unknown-origin', 'default origins use the default port'),
  no('port', 'https://example.com:0', 'malformed'),
  no('port', 'https://example.com:0443', 'malformed'),
  no('port', 'https://example.com:65536', 'malformed'),
  no('port', 'https://example.com:99999999', 'malformed'),
  no('port', 'https://example.com:', 'not-canonical'),
  no('port', 'https://example.com:+443', 'malformed'),
  no('port', 'https://example.com:44a', 'malformed'),
  no('port', `https://example-com.${G}:443`, 'not-canonical'),
  no('port', `https://example-com.${G}:8443`, 'non-default-port'),
  no('port', `https://example-com.${G}:1`, 'non-default-port'),

  // Schemes.
  no('scheme', 'http://example.com', 'unknown-origin'),
  no('scheme', 'http://www.example.com', 'unknown-origin'),
  no('scheme', 'http://example.com:80', 'not-canonical'),
  no('scheme', `http://example-com.${G}`, 'insecure-scheme'),
  no('scheme', `http://a-example-org.${G}`, 'insecure-scheme'),
  no('scheme', 'HTTPS://example.com', 'not-canonical'),
  no('scheme', 'Https://example.com', 'not-canonical'),
  no('scheme', 'ftp://example.com', 'unsupported-scheme'),
  no('scheme', 'wss://example.com', 'unsupported-scheme'),
  no('scheme', 'file://', 'unsupported-scheme'),
  no('scheme', 'chrome-extension://abcdefghijklmnop', 'unsupported-scheme'),
  no('scheme', 'javascript://example.com', 'unsupported-scheme'),
  no('scheme', 'example.com', 'malformed'),
  no('scheme', '//example.com', 'malformed'),
  no('scheme', 'https:example.com', 'malformed'),
  no('scheme', 'https:/example.com', 'malformed'),
  no('scheme', 'https://', 'malformed'),

  // null and missing.
  no('null', 'null', 'null-origin'),
  no('null', 'NULL', 'malformed'),
  no('null', 'Null', 'malformed'),
  no('null', '', 'missing'),
  no('null', null, 'missing'),

  // Lists.
  no('list', 'https://example.com, https://evil.com', 'list'),
  no('list', 'https://example.com,https://example.com', 'list'),
  no('list', `https://evil.com,https://example-com.${G}`, 'list'),
  no('list', 'https://example.com,', 'list'),
  no('list', ',https://example.com', 'list'),
  no('list', 'https://example.com https://evil.com', 'control-character'),

  // Whitespace and control characters.
  no('whitespace-control', ' https://example.com', 'control-character'),
  no('whitespace-control', 'https://example.com ', 'control-character'),
  no('whitespace-control', 'https://example.com\t', 'control-character'),
  no('whitespace-control', 'https://example.com\r\nSet-Cookie: a=b', 'control-character'),
  no('whitespace-control', 'https://example.com\n', 'control-character'),
  no('whitespace-control', 'https://example.com\u0000', 'control-character'),
  no('whitespace-control', 'https://exa\u0000mple.com', 'control-character'),
  no('whitespace-control', 'https://example.com\u007f', 'control-character'),
  no('whitespace-control', 'https://example.com\u000b', 'control-character'),
  no('whitespace-control', `https://example-com.${G}\r\n`, 'control-character'),
  no('whitespace-control', 'https://example.com\u00a0', 'not-canonical', 'no-break space'),
  no('whitespace-control', 'https://example.com\u2028', 'not-canonical', 'line separator'),
  no('whitespace-control', 'https://example.com\u0085', 'not-canonical', 'next line (C1)'),

  // Invalid punycode.
  no(
    'invalid-punycode',
    `https://xn--bcher-kva-de.${G}`,
    'unknown-publisher',
    "a punycode tail that does not decode; read as plain ASCII, toolbox's prefix of xn-bcher.kva.de",
  ),
  no('invalid-punycode', `https://xn--a-9.${G}`, 'invalid-punycode', 'ends inside a variable-length integer'),
  no('invalid-punycode', `https://xn--zzzzzzzzzzzzzzzzzzzz.${G}`, 'invalid-punycode'),
  no('invalid-punycode', `https://xn--ab-9999999999999999.${G}`, 'invalid-punycode', 'overflow'),
  no('invalid-punycode', `https://xn--abc.${G}`, 'invalid-domain', 'decodes to a label that does not round-trip'),
  no(
    'invalid-punycode',
    `https://xn--ls8h-com.${G}`,
    'unknown-publisher',
    "decodes to a label that does not round-trip; toolbox's prefix of the plain xn-ls8h.com",
  ),
  no('invalid-punycode', `https://xn--99zzzz.${G}`, 'invalid-punycode'),
  no(
    'invalid-punycode',
    `https://xn--a-com.${G}`,
    'unknown-publisher',
    'punycode of uppercase "Ḭa-com" (browsers refuse it); toolbox\'s prefix of the plain xn-a.com',
  ),
  no('invalid-punycode', 'https://xn--zzzzzzzzzzzz.com', 'unknown-origin', 'publisher-origin path does not decode'),
  no('invalid-punycode', `https://xn---.${G}`, 'malformed'),

  // Oversized values.
  no('oversized', `https://${'a'.repeat(65_536)}.${G}`, 'too-long', '64 kB'),
  no('oversized', `https://example-com.${G}${' '.repeat(65_536)}`, 'too-long', '64 kB of trailing spaces'),
  no('oversized', `${'https://example.com,'.repeat(3_300)}`, 'too-long', '64 kB list'),
  no('oversized', `https://${'a-'.repeat(32_768)}com.${G}`, 'too-long'),
  no('oversized', `https://${'a'.repeat(64)}-com.${G}`, 'not-a-label', 'a 68-octet prefix: longer than any cache produces, refused before decoding'),
  no('oversized', `https://${`${'a'.repeat(63)}.`.repeat(4)}com`, 'malformed', 'host over 253 octets'),

  // Request context: AMP-Same-Origin and __amp_source_origin (SPEC §7).
  { class: 'context', origin: null, allowed: true, reason: 'same-origin', context: { ampSameOrigin: 'true' } },
  { class: 'context', origin: null, allowed: false, reason: 'missing', context: { ampSameOrigin: 'TRUE' } },
  { class: 'context', origin: null, allowed: false, reason: 'missing', context: { ampSameOrigin: '1' } },
  { class: 'context', origin: null, allowed: false, reason: 'missing', context: { ampSameOrigin: 'true, true' } },
  {
    class: 'context',
    origin: 'https://evil.com',
    allowed: false,
    reason: 'unknown-origin',
    context: { ampSameOrigin: 'true' },
    note: 'AMP-Same-Origin never overrides an Origin',
  },
  {
    class: 'context',
    origin: `https://evil-com.${G}`,
    allowed: false,
    reason: 'unknown-publisher',
    context: { sourceOrigin: 'https://evil.com' },
    note: 'the @ampproject/toolbox-cors attack',
  },
  { class: 'context', origin: `https://example-com.${G}`, allowed: false, reason: 'source-origin-mismatch', context: { sourceOrigin: 'https://evil.com' } },
  { class: 'context', origin: `https://example-com.${G}`, allowed: true, reason: 'cache-origin', context: { sourceOrigin: 'https://example.com' } },
  { class: 'context', origin: `https://example-com.${G}`, allowed: false, reason: 'source-origin-mismatch', context: { sourceOrigin: 'https://example.com/' } },
  { class: 'context', origin: `https://example-com.${G}`, allowed: false, reason: 'source-origin-mismatch', context: { sourceOrigin: 'http://example.com' } },
  { class: 'context', origin: null, allowed: false, reason: 'source-origin-mismatch', context: { ampSameOrigin: 'true', sourceOrigin: 'https://evil.com' } },
];
