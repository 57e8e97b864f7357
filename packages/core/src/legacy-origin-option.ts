import { decode as punycodeDecode, encode as punycodeEncode } from 'punycode/punycode.es6.js';
import { getPublicSuffix, parse } from 'tldts';
import { exhaustedRewrites } from './asked-origin.js';
import { AmpCorsError } from './errors.js';
import { type ParsedOrigin, parseOrigin } from './origin-header.js';
import { PSL_GENERIC_TLDS, PSL_SIBLINGS } from './psl-ancestors.js';
import type { DenyReason, Verdict, VerifyContext } from './verifier.js';

// ---------------------------------------------------------------------------
// Canaries: origins no configuration can name (issue #14 item 3).

/**
 * Random lowercase letters (letters only, so that a `[a-z.]+` pattern matches
 * them as it would a real host). `Math.random`, not Web Crypto: this runs at
 * import, and Cloudflare Workers refuse `crypto.getRandomValues` in global
 * scope; a label that no configuration names needs no secrecy.
 */
function randomLetters(count: number): string {
  let out = '';
  for (let i = 0; i < count; i++) out += String.fromCharCode(97 + Math.floor(Math.random() * 26));
  return out;
}

/** How many random letters end {@link CANARY_LABEL}. */
const CANARY_FILL = 12;

/** A host label drawn once per process: no configuration, file or allow-list can contain it (its end, random letters, may stand for it where it does not fit). */
const CANARY_LABEL = `ampcorscanary${randomLetters(CANARY_FILL)}`;

/** Twelve decimal digits drawn once per process: what a digit wildcard (`example[0-9]*`) matches and no list names. */
const CANARY_DIGITS = Array.from({ length: 12 }, () => String(Math.floor(Math.random() * 10))).join('');

/**
 * The hosts of the canary origins: the reserved `.invalid` TLD, a generic
 * TLD, and an AMP cache (a pattern over `*.cdn.ampproject.org` trusts every
 * AMP page in the world, the classic AMP CORS mistake).
 */
const CANARY_HOSTS: readonly string[] = [`${CANARY_LABEL}.invalid`, `${CANARY_LABEL}.com`, `${CANARY_LABEL}.cdn.ampproject.org`, `www.${CANARY_LABEL}.org`];

/** A random whole number from `min` to `max` inclusive (`Math.random`, as {@link randomLetters}). */
function randomBetween(min: number, max: number): number {
  return min + Math.floor(Math.random() * (max - min + 1));
}

/**
 * Three IPv4 addresses drawn once per process, one in each documentation
 * range (RFC 5737: 192.0.2.0/24, 198.51.100.0/24, 203.0.113.0/24): what a
 * pattern allowing every IP address (`\d+\.\d+\.\d+\.\d+`, `^https:\/\/\d`)
 * matches, and no real site serves. A list may name a documentation address
 * (tests do): each is asked with a second one of another range as its
 * confirmation, and only both allowed count.
 */
const CANARY_IPV4: readonly [string, string, string] = [
  `192.0.2.${randomBetween(1, 254)}`,
  `198.51.100.${randomBetween(1, 254)}`,
  `203.0.113.${randomBetween(1, 254)}`,
];

/**
 * An IPv6 address drawn once per process in the documentation range
 * 2001:db8::/32 (RFC 3849), bracketed as an origin writes it: six random
 * groups of four hex digits, none starting with 0, so that the text is the
 * canonical one; 96 random bits no list names.
 */
const CANARY_IPV6 = `[2001:db8:${Array.from({ length: 6 }, () => randomBetween(0x1000, 0xffff).toString(16)).join(':')}]`;

/** A canary origin, and a second one that must be allowed too for the first to count (for a canary a list could name: a documentation IPv4 address). */
interface Canary {
  /** The canary origin. */
  readonly origin: string;
  /** Its confirmation, asked only once `origin` was allowed. */
  readonly confirm?: string;
}

/**
 * The canary origins an origin option is asked about at construction: every
 * host of {@link CANARY_HOSTS} over `https`, plus `http` and a port; the
 * IPv4 and IPv6 canaries the same three ways. An option that allows any of
 * them allows origins its author never named, that is, every origin (or
 * every IP address: anyone with a virtual machine serves pages at one) for
 * practical purposes.
 */
const CANARIES: readonly Canary[] = [
  ...CANARY_HOSTS.map((host) => ({ origin: `https://${host}` })),
  { origin: `http://${CANARY_LABEL}.invalid` },
  { origin: `https://${CANARY_LABEL}.invalid:8443` },
  { origin: `https://${CANARY_IPV4[0]}`, confirm: `https://${CANARY_IPV4[1]}` },
  { origin: `http://${CANARY_IPV4[1]}`, confirm: `http://${CANARY_IPV4[2]}` },
  { origin: `https://${CANARY_IPV4[2]}:8443`, confirm: `https://${CANARY_IPV4[0]}:8443` },
  { origin: `https://${CANARY_IPV6}` },
  { origin: `http://${CANARY_IPV6}` },
  { origin: `https://${CANARY_IPV6}:8443` },
];

let canaryTurn = 0;

/**
 * A canary origin shaped like `origin` (same scheme and port), its host taken
 * in turn from {@link CANARY_HOSTS}: what a per-request answer is checked
 * against (a function allowing every `https` origin, or every origin on one
 * port, allows it too).
 */
export function canaryLike(origin: ParsedOrigin): string {
  canaryTurn = (canaryTurn + 1) % CANARY_HOSTS.length;
  return `${origin.scheme}://${CANARY_HOSTS[canaryTurn] as string}${origin.port === null ? '' : `:${origin.port}`}`;
}

/** The one refusal of an option that allows any origin, with credentials (the same for `true`, `'*'`, a RegExp and a function). */
function anyOriginWithCredentials(what: string): AmpCorsError {
  return new AmpCorsError(
    'unsafe-configuration',
    `${what} together with credentials lets every site read credentialed responses; list the trusted origins or set credentials: false`,
  );
}

function canaryNote(canary: string): string {
  return `it allowed ${canary}, an origin no configuration names`;
}

// ---------------------------------------------------------------------------
// Look-alikes: origins anyone can register that a loosely written option also trusts.

/** The letter a look-alike puts where an allowed host has a dot: what an unescaped `.` in a pattern matches too. */
const DOT_STAND_IN = 'q';

/** A dotted-decimal IPv4 host (parseOrigin admits no other numeric form). */
const IPV4_HOST = /^[0-9]+\.[0-9]+\.[0-9]+\.[0-9]+$/;

/** One look-alike of an allowed origin, and the mistake of an option that also allows it. */
export interface LookAlike {
  /** The look-alike origin: same scheme and port, a host under a registrable domain nobody configured. */
  readonly origin: string;
  /** The usual mistake behind allowing it, for the error message. */
  readonly mistake: string;
  /**
   * A second look-alike of the same shape, for a look-alike a finite list
   * could name by chance (a same-length run, `shop7` for `shop1`): the
   * option shows the mistake only when it allows both (`(shop1|shop7)`
   * names two shops; `shop[0-9]` allows `shop4` too). Asked only once
   * `origin` was allowed.
   */
  readonly confirm?: string;
}

/** At most this many look-alikes of each of kinds (d) and (e) of {@link lookAlikes} per origin (a bound on a long label's questions). */
const MAX_LABEL_VARIANTS = 8;

/**
 * The two same-shape stand-ins of (e) and (f) of {@link lookAlikes}, per
 * kind of character: [the stand-in, the one used where the character is
 * that stand-in], so that every character differs. A letter of a hex digit
 * stays one (`[0-9a-f]{7}` matches the variant as it matches a short hash).
 */
const SAME_SHAPE: ReadonlyArray<Readonly<Record<'hex' | 'letter' | 'digit', readonly [string, string]>>> = [
  { hex: ['f', 'e'], letter: ['q', 'z'], digit: ['7', '3'] },
  { hex: ['c', 'd'], letter: ['x', 'j'], digit: ['4', '8'] },
];

/** `text` (letters and digits) with every character replaced by one of the same kind, per stand-in set `variant` of {@link SAME_SHAPE}; `hex: false` treats a-f as any letter. */
function sameShape(text: string, variant: 0 | 1, hex = true): string {
  const table = SAME_SHAPE[variant] as (typeof SAME_SHAPE)[number];
  let out = '';
  for (const char of text) {
    const [standIn, instead] = char >= '0' && char <= '9' ? table.digit : hex && char >= 'a' && char <= 'f' ? table.hex : table.letter;
    out += char === standIn ? instead : standIn;
  }
  return out;
}

/**
 * The look-alikes of an allowed origin: origins of the same scheme and port
 * whose host lies under a registrable domain that no configuration names
 * (it carries the process's random canary label, turns a dot of the
 * registrable domain into a letter, changes its first label or a label of
 * its public suffix for same-shape text, or puts the label under other
 * real public suffixes drawn at random). An option that allows the origin
 * and one of these trusts sites anyone can register. Every look-alike of a
 * host that is a DNS name is one too (labels of at most 63 characters, at
 * most 253 in all), so that a function validating names (tldts, psl) says
 * no to one only when it does not trust it: the canary is shortened where
 * it would not fit, to no fewer than its twelve random letters, and a
 * label still too long loses characters next to it; a longer host loses
 * characters of its leftmost labels, never of the varied registrable
 * domain:
 *
 * (a) the host extended, `example.com.<canary>.invalid`: a match without
 *     an end anchor (`/^https:\/\/example\.com/`, `startsWith`);
 * (b) the canary glued in front of the registrable domain (its eTLD+1, the
 *     Public Suffix List's private section included, so `user.github.io`
 *     is one), `www.<canary>example.com`: a suffix match without its dot
 *     (`/example\.com$/`, `endsWith('example.com')`); for an IDN (`xn--`)
 *     label, also glued to its Unicode form and written back in punycode
 *     (`www.<canary>bücher.de`, in Hebrew letters before a right-to-left
 *     label, which may hold no Latin one): the same match on the host read
 *     in Unicode (`domainToUnicode(host).endsWith('bücher.de')`, which also
 *     allows `mebücher.de`; an ASCII brand read so allows `évilexample.com`,
 *     and that IDN origin's own look-alike shows it);
 * (c) each dot from the one just left of the registrable domain rightwards
 *     made a letter, `wwwqexample.com`, `www.exampleqcom`: an unescaped dot;
 *     next to an IDN label, also the two labels' Unicode forms made one
 *     (`wwwqbücher.de`, for `/^www.bücher\.de$/` on the Unicode host);
 * (d) the registrable domain's first label continued: the canary label and
 *     the canary digits after it (`example<canary>.com`,
 *     `example<digits>.com`), and the canary label on either side of each
 *     of its hyphens (`myapp-<canary>git-main.vercel.app`): a wildcard
 *     inside the label (`myapp-[a-z0-9-]+\.vercel\.app`, `example[0-9]*`);
 * (e) each maximal run of letters or of digits of that label replaced by a
 *     run of the same kind and length differing at every character
 *     ({@link SAME_SHAPE}: `myapp-fff123xyz-team`, `example7.com` for
 *     `example1.com`), confirmed by a second such run: a fixed-length
 *     wildcard (`myapp-[a-z0-9]{9}-team`); (d) and (e) vary an IDN (`xn--`)
 *     label's Unicode form and write each variant back in punycode
 *     (`bücher<canary>`, `fücher`: the runs keep the punycode's length; the
 *     canary in Hebrew letters in a right-to-left label, as (b)),
 *     and (e) also makes an IDN label ASCII text of its length, its
 *     letters and digits varied and its hyphens kept (`qq--qqqqq-qqq` for
 *     `xn--bcher-kva`): a length-bounded wildcard (`[a-z0-9-]{1,63}`) that
 *     a continued label outgrows;
 * (f) each label of the public suffix replaced whole likewise (letters
 *     only, hyphens kept), confirmed by a second: each label left of the
 *     top-level domain whose right-hand labels form a public suffix of
 *     their own (the Public Suffix List's private section and wildcard
 *     rules included), so that the variant lies outside the names its
 *     owner runs (`example.qq.uk` and `example.xx.uk` for `example.co.uk`,
 *     `my-app.qqqqqq.app` for `my-app.vercel.app`; not `s3` of
 *     `s3.us-west-2.amazonaws.com`, whose variants are Amazon's): a
 *     wildcard over a label of the public suffix (`example\.[a-z]+\.uk`
 *     also allows `example.me.uk`, `my-app\.[a-z]+\.app` allows
 *     `my-app.netlify.app`); then the top-level domain (`example.qqq`,
 *     `example.co.qq`, confirmed by `.xxx`, `.xx`; an IDN one becomes
 *     ASCII text, `xn--p1ai` → `qq--q7qq`): a wildcard top-level domain
 *     (`example\.[a-z]{2,6}`); an IDN label also becomes text of its
 *     Unicode form's script and length, written back in punycode
 *     (`пример.жж` and `пример.юю` for `пример.рф`, `例子.书书` for
 *     `例子.中国`; {@link sameScriptLabel}): a function trusting the brand
 *     under any top-level domain of its script on the host read in Unicode
 *     (`/^пример\.[а-яё]+$/u`, `/^例子\.\p{Script=Han}+$/u`; attacker's
 *     review, session 17). These suffixes are none the list holds
 *     (nobody can register `example.qq.uk`): they show a pattern; (i)
 *     shows a function that knows which suffixes exist;
 * (g) for an IP host, each part of the address varied, each variant
 *     confirmed by a second: each IPv4 octet replaced by another of its
 *     length (`192.168.1.74` and `192.168.1.38` for `192.168.1.20`), and
 *     each digit of an octet of two or three digits, but a hundreds digit
 *     (which has one other value at most), replaced by another that keeps
 *     it an octet (`192.168.1.157` and `.153`, `.170` and `.130` for
 *     `192.168.1.150`: at most eight); each of the eight IPv6 groups, the
 *     zero groups `::` hides included, replaced by a non-zero one,
 *     written as a browser writes it (`[fd12:7::]` and `[fd12:4::]` for
 *     `[fd12::]`): a wildcard over addresses (`192\.168\.1\.\d+`, a
 *     DHCP pool `192\.168\.1\.1\d\d`, a cloud provider's range, an
 *     IPv6 /64, a ULA `fd[0-9a-f]{2}:[0-9a-f:]*`), but not the parts that
 *     keep a loopback address loopback (`127.0.0.1`'s last three octets,
 *     `[::1]`): those are the machine's own;
 * (h) for every origin, an address of the documentation ranges (RFC 5737
 *     and RFC 3849) of its family, IPv4 for a domain name, drawn once per
 *     process (an IPv4 one confirmed by one of another range, since a list
 *     may name a documentation address): an option allowing every IP
 *     address (`\d+\.\d+\.\d+\.\d+`, `^https:\/\/\d`); anyone with a
 *     virtual machine serves pages at one;
 * (i) for a name whose public suffix the list holds (either section), the
 *     suffix replaced whole by real ones, each confirmed by a second: two
 *     pairs of generic top-level domains drawn once per process from the
 *     list's ICANN section ({@link DRAWN_TLDS}: not a country's, nor `com`,
 *     `net`, `org` and the like: `www.example.coupon` and
 *     `www.example.wine`, `www.example.bar` and `www.example.kitchen` for
 *     `www.example.co.uk`); then, for a suffix of
 *     two labels, two other rules of its top-level domain and section
 *     (`example.gov.uk`, `example.nhs.uk`; `gitlab.io` for `github.io`,
 *     `web.app` for `vercel.app`), drawn once per process too
 *     ({@link siblingSuffixes}): a function that trusts the name under
 *     any suffix the list holds (tldts's `(isIcann || isPrivate) &&
 *     domainWithoutSuffix === 'example'`, parse-domain's `Listed`, psl's
 *     `listed`), or under any rule of one top-level domain or section; the
 *     same-shape suffixes of (f) are in no list, so such a function said
 *     no to every one (attacker's review, session 17).
 *
 * The canary, and two same-shape runs at once, are names no finite list of
 * names contains (a list that holds both same-shape runs is indistinguishable
 * from the wildcard it spells out); a match shows the option allows
 * unboundedly many registrable domains. The suffixes drawn for (i) are
 * real, and a strict list may name both of a pair (`example.wine` and
 * `example.coupon` among a brand's sites): refused then, as a list holding
 * both same-shape runs is; with some 1,000 generic top-level domains to
 * draw from, a list naming n of them (`com`, `net`, `org`, country codes
 * and the like not counted) is refused in about 2(n/1000)² of processes;
 * the rules of a top-level domain drawn are its restricted ones (`ac`,
 * `gov`, `nhs`, `police` for `uk`; not `co`, `org`, `me`, `ltd`, which a
 * brand's list may name several of) and platforms of its private section
 * (up to eight each). Not reached: a wildcard that only
 * adds a separator or a fixed word (`www[.-]example\.com`, `(www)?example`:
 * indistinguishable from a list of two names), a fixed-length wildcard glued
 * to literal letters in one run (`myapp[a-z]{3}`), runs past the eighth and
 * hyphens past the eighth (kinds (d) and (e) are capped at
 * {@link MAX_LABEL_VARIANTS} each), and a length-bounded pattern over IDN
 * labels only (`xn--[a-z0-9-]{1,59}`) seen from an allowed IDN label with
 * no ASCII letter or digit, too long to be continued within the bound. A
 * platform whose naming rules keep a pattern safe (Netlify's
 * `<id>--site.netlify.app`) is not known here: such a pattern is refused
 * with credentials; list its origins. Nor is a function trusting the name
 * under every country code only (a list of a brand's countries cannot be
 * told from it), nor under every rule of one deeper parent (the regions
 * of `amazonaws.com`: {@link PSL_SIBLINGS} holds the rules under top-level
 * domains only).
 *
 * Labels left of the registrable domain are never changed, so a pattern
 * trusting every subdomain (`([a-z0-9-]+\.)*example\.com`) has no
 * look-alike. A host with no registrable domain (`localhost`, a public
 * suffix) only has (a) and (h); an IPv4 host (a), (g) and (h); an IPv6 host
 * (g) and (h) (a bracketed host cannot be extended). A list of addresses
 * that holds both variants of a part (`10.0.0.3` and `10.0.0.7` next to
 * `10.0.0.1`, `.157` and `.153` next to `.150`) is indistinguishable from
 * the wildcard it spells out, as with (e); a range over a hundreds digit
 * alone (`1\.[12]50`) is one of two addresses, not reached; nor is a range
 * over part of an IPv6 group (`fd12::1[0-9a-f]` beside `fd12::10`: sixteen
 * addresses of one network), since each group is varied whole.
 */
export function lookAlikes(origin: ParsedOrigin): LookAlike[] {
  const found = origin.host.startsWith('[') ? [] : nameLookAlikes(origin);
  found.push(...addressLookAlikes(origin));
  return found;
}

/** Kinds (a) to (f) of {@link lookAlikes}, for a host that is no IPv6 address (an IPv4 host, localhost or a public suffix: (a) only). */
function nameLookAlikes(origin: ParsedOrigin): LookAlike[] {
  const { host } = origin;
  const at = sameSchemeAndPort(origin);
  // (a) A missing end anchor.
  const found: LookAlike[] = [{ origin: at(extended(host)), mistake: 'a match without an end anchor' }];
  const read = readHost(host);
  if (read === undefined) return found;
  const registrable = read.domain as string;
  const start = host.length - registrable.length;
  // The registrable domain as its first label and the rest (`.vercel.app`, `.co.uk`), under the same subdomain labels
  // (shortened from the left when the host outgrows a DNS name: a function validating names says no to one).
  const label = registrable.slice(0, registrable.indexOf('.'));
  const rest = registrable.slice(label.length);
  const under = (first: string, after = rest) => at(withinName(`${host.slice(0, start)}${first}${after}`, first.length + after.length));
  // The label's text that (b), (d) and (e) vary: an IDN label's Unicode form (`xn--bcher-kva`: `bücher`), each variant written
  // back in punycode, so that it stays a host a browser sends (undefined for an `xn--` label that is no punycode).
  const idn = label.startsWith('xn--');
  const text = idn ? unicodeLabel(label) : label;
  const written = (variant: string) => (idn ? `xn--${punycodeEncode(variant)}` : variant);
  // A label's Unicode form (undefined for an `xn--` label that is no punycode), the registrable domain's first one read once.
  const unicodeOf = (part: string) => (part === label ? text : part.startsWith('xn--') ? unicodeLabel(part) : part);
  // (b) A suffix match without its dot (the canary shortened if the label would outgrow a DNS label); an IDN label's
  // Unicode form too, for a match on the host read in Unicode (`domainToUnicode(host).endsWith('bücher.de')`).
  const glued = fittedLabel(CANARY_LABEL, '', label);
  if (glued !== undefined) found.push({ origin: under(glued), mistake: 'a suffix match without its leading dot' });
  const gluedText = idn && text !== undefined ? fittedLabel(inScriptOf(text, CANARY_LABEL), '', text, written) : undefined;
  if (gluedText !== undefined) found.push({ origin: under(gluedText), mistake: 'a suffix match without its leading dot' });
  // (c) An unescaped dot, from the one bounding the registrable domain rightwards.
  for (let dot = host.indexOf('.', Math.max(start - 1, 0)); dot >= 0; dot = host.indexOf('.', dot + 1)) {
    // The two labels made one: a label over 63 characters loses its first ones (a DNS name, see above).
    const from = host.lastIndexOf('.', dot - 1) + 1;
    const to = host.indexOf('.', dot + 1) < 0 ? host.length : host.indexOf('.', dot + 1);
    const [left, right] = [host.slice(from, dot), host.slice(dot + 1, to)];
    const merged = `${left}${DOT_STAND_IN}${right}`;
    found.push({ origin: at(host.slice(0, from) + merged.slice(Math.max(0, merged.length - MAX_LABEL_LENGTH)) + host.slice(to)), mistake: 'an unescaped dot' });
    // Next to an IDN label, the two Unicode forms made one too, for a pattern on the host read in Unicode (`/^www.bücher\.de$/`).
    const mergedText = left.startsWith('xn--') || right.startsWith('xn--') ? mergedUnicode(unicodeOf(left), unicodeOf(right)) : undefined;
    if (mergedText !== undefined) found.push({ origin: at(host.slice(0, from) + mergedText + host.slice(to)), mistake: 'an unescaped dot' });
  }
  if (text !== undefined) {
    // (d) The label continued: at its end, and on either side of each hyphen (the canary shortened to keep a DNS label).
    const continued = 'a wildcard inside the registrable domain';
    for (const fill of [CANARY_LABEL, CANARY_DIGITS]) {
      const longer = fittedLabel(inScriptOf(text, fill), text, '', written);
      if (longer !== undefined) found.push({ origin: under(longer), mistake: continued });
    }
    let inserted = 0;
    for (let i = 1; i < text.length && inserted < MAX_LABEL_VARIANTS; i++) {
      if (text[i] !== '-' && text[i - 1] !== '-') continue;
      const split = fittedLabel(inScriptOf(text, CANARY_LABEL), text.slice(0, i), text.slice(i), written);
      if (split !== undefined) found.push({ origin: under(split), mistake: continued });
      inserted++;
    }
    // (e) Each run of letters or digits made another of the same shape, confirmed by a second (an IDN's punycode keeps its length).
    let replaced = 0;
    for (const run of text.matchAll(/[a-z]+|[0-9]+/g)) {
      if (replaced++ >= MAX_LABEL_VARIANTS) break;
      const [before, after] = [text.slice(0, run.index), text.slice(run.index + run[0].length)];
      found.push({
        origin: under(written(before + sameShape(run[0], 0) + after)),
        confirm: under(written(before + sameShape(run[0], 1) + after)),
        mistake: 'a fixed-length wildcard inside the registrable domain',
      });
    }
  }
  if (idn) {
    // (e) An IDN label made ASCII text of its length: a length-bounded wildcard (`[a-z0-9-]{1,63}`) that a continued label outgrows.
    found.push({
      origin: under(sameShapeLabel(label, 0)),
      confirm: under(sameShapeLabel(label, 1)),
      mistake: 'a length-bounded wildcard inside the registrable domain',
    });
  }
  // (f) Each label of the public suffix made another of its shape, confirmed by a second: each label left of the top-level
  // domain whose right-hand labels form a public suffix of their own, so that the variant is a name anyone may register
  // (`co` of co.uk, `vercel` of vercel.app; not `s3` of s3.amazonaws.com, whose variant is Amazon's), then the top-level domain.
  for (let from = 1; from < rest.length;) {
    const dot = rest.indexOf('.', from);
    const to = dot < 0 ? rest.length : dot;
    const before = rest.slice(0, from);
    const suffixLabel = rest.slice(from, to);
    const after = rest.slice(to);
    from = to + 1;
    // ASCII text of its length; an IDN label also text of its Unicode form's script and length (`рф` → `жж`, `例子.中国` → `例子.书书`).
    const variants = [[sameShapeLabel(suffixLabel, 0), sameShapeLabel(suffixLabel, 1)], sameScriptLabel(suffixLabel)];
    for (const [first, second] of variants.filter((pair) => pair !== undefined)) {
      // Two labels or more to its right: under a public suffix only (a PSL wildcard rule, `*.compute.amazonaws.com`, may make the variant one).
      if (after.indexOf('.', 1) > 0) {
        const ruled = getPublicSuffix(first + after, { allowPrivateDomains: true, extractHostname: false }) ?? '';
        if (ruled.length < after.length - 1) continue;
      }
      found.push({
        origin: under(label, before + first + after),
        confirm: under(label, before + second + after),
        mistake: after === '' ? 'a wildcard top-level domain' : 'a wildcard over a label of the public suffix (another registrable name)',
      });
    }
  }
  // (i) A suffix the list holds replaced whole by real ones, each confirmed by a second: generic top-level domains drawn
  // once per process (two pairs), then, for a suffix of two labels, other rules under its top-level domain in its section.
  if (read.isIcann !== true && read.isPrivate !== true) return found;
  const suffix = rest.slice(1);
  const skip = DRAWN_TLDS.indexOf(suffix);
  // The drawn ones but the origin's own suffix (one of five), in their order.
  const drawn = (at: number) => `.${DRAWN_TLDS[skip >= 0 && at >= skip ? at + 1 : at] as string}`;
  for (let pair = 0; pair < 4; pair += 2) found.push({ origin: under(label, drawn(pair)), confirm: under(label, drawn(pair + 1)), mistake: LISTED_SUFFIX });
  const siblings = siblingSuffixes(suffix, read.isPrivate === true);
  if (siblings !== undefined) {
    found.push({ origin: under(label, `.${siblings[0]}`), confirm: under(label, `.${siblings[1]}`), mistake: LISTED_SUFFIX });
  }
  return found;
}

/** The mistake of kind (i) of {@link lookAlikes}. */
const LISTED_SUFFIX = 'the name trusted under any public suffix the list holds: anyone registers it under another one';

/**
 * Five generic top-level domains of the Public Suffix List
 * ({@link PSL_GENERIC_TLDS}: not `com`, `net`, `org` and the like, nor a
 * country's), distinct, drawn once per process: kind (i) of
 * {@link lookAlikes} uses the first four that are not the allowed origin's
 * own suffix, as two pairs (a look-alike and its confirmation each): a
 * function reading an older copy of the list than tldts's (psl 1.15 lacks
 * `hotel` and `web`) says no to a top-level domain added since, and
 * misses only when both pairs hold one. `Math.random`, as
 * {@link randomLetters}: the draw needs no secrecy. An attacker who knows it gains nothing, since the draw only
 * decides which of the list's suffixes a function is asked about, and a
 * function trusting a name under every listed suffix allows whichever is
 * drawn; it is random only so that no strict list is refused for good
 * because it names the same two suffixes as every process's draw.
 */
const DRAWN_TLDS: readonly string[] = (() => {
  const pool = PSL_GENERIC_TLDS.split(' ');
  const drawn: string[] = [];
  while (drawn.length < 5) {
    const tld = pool[Math.floor(Math.random() * pool.length)] as string;
    if (!drawn.includes(tld)) drawn.push(tld);
  }
  return drawn;
})();

/** Two fractions drawn once per process that pick kind (i)'s sibling suffixes (as {@link DRAWN_TLDS}, no secrecy needed). */
const SIBLING_DRAW: readonly [number, number] = [Math.random(), Math.random()];

/** {@link PSL_SIBLINGS} read into a map: top-level domain → [ICANN section's labels, private section's], built at first use. */
let siblingPools: Map<string, readonly [readonly string[], readonly string[]]> | undefined;

/**
 * Two other real public suffixes of the same top-level domain and section
 * of the list as `suffix`, when it has two labels (`co.uk` → `gov.uk` and
 * `nhs.uk`, `github.io` → `gitlab.io`...), drawn once per process
 * ({@link SIBLING_DRAW}) from {@link PSL_SIBLINGS}; undefined for another
 * suffix, or when fewer than two others are listed.
 *
 * @param isPrivate - whether `suffix` is a rule of the list's private section
 */
function siblingSuffixes(suffix: string, isPrivate: boolean): readonly [string, string] | undefined {
  const dot = suffix.indexOf('.');
  if (dot < 0 || suffix.indexOf('.', dot + 1) >= 0) return undefined;
  if (siblingPools === undefined) {
    siblingPools = new Map();
    for (const entry of PSL_SIBLINGS.split(' ')) {
      const [tld, pools] = entry.split('/') as [string, string];
      const [icann, own] = pools.split('|') as [string, string];
      siblingPools.set(tld, [icann === '' ? [] : icann.split(','), own === '' ? [] : own.split(',')]);
    }
  }
  const tld = suffix.slice(dot + 1);
  const pools = siblingPools.get(tld);
  if (pools === undefined) return undefined;
  const own = suffix.slice(0, dot);
  const others = pools[isPrivate ? 1 : 0].filter((other) => other !== own);
  if (others.length < 2) return undefined;
  const first = Math.floor(SIBLING_DRAW[0] * others.length);
  let second = Math.floor(SIBLING_DRAW[1] * (others.length - 1));
  if (second >= first) second++;
  return [`${others[first] as string}.${tld}`, `${others[second] as string}.${tld}`];
}

/** The longest a host label may be (RFC 1035 2.3.4): a function validating names (tldts, psl) refuses a longer one. */
const MAX_LABEL_LENGTH = 63;

/** The longest a host name may be, dots included (RFC 1035 2.3.4, the root's dot left out). */
const MAX_NAME_LENGTH = 253;

/**
 * The label `write(before + piece + after)` (kinds (b) and (d) of
 * {@link lookAlikes}: `piece` glued into a label), kept a DNS label of at
 * most {@link MAX_LABEL_LENGTH} characters: `piece` is the longest end of
 * `fill` that fits, all of it for a label of ordinary length, never fewer
 * than its last {@link CANARY_FILL} characters (random ones); a label too
 * long even then loses characters next to the piece, on the side that is
 * not a hyphen (`after`'s start, or `before`'s end when `after` starts
 * with the hyphen or is empty), so that what a wildcard matches shrinks and
 * the literal text around it stays (`<canary><tail of the label>` for
 * (b), `<head of the label><canary>` for (d)). Undefined when nothing fits.
 *
 * @param write - how the label is sent (an IDN's punycode; by default as it is)
 */
function fittedLabel(fill: string, before: string, after: string, write: (text: string) => string = (text) => text): string | undefined {
  const whole = write(before + fill + after);
  if (whole.length <= MAX_LABEL_LENGTH) return whole;
  const minimum = Math.min(fill.length, CANARY_FILL);
  // The piece as long as the label's room allows (one step for ASCII; a punycode's length may need more).
  for (let length = Math.min(fill.length - 1, Math.max(minimum, MAX_LABEL_LENGTH - write(before + after).length)); length >= minimum; length--) {
    const label = write(before + fill.slice(fill.length - length) + after);
    if (label.length <= MAX_LABEL_LENGTH) return label;
  }
  const piece = fill.slice(fill.length - minimum);
  const trimAfter = after !== '' && (before === '' || !after.startsWith('-'));
  let [head, tail] = [before, after];
  for (;;) {
    const over = write(head + piece + tail).length - MAX_LABEL_LENGTH;
    if (over <= 0) return write(head + piece + tail);
    // At least one character each turn, as many as the label is over where each is one (ASCII).
    const cut = Math.max(1, Math.min(over, (trimAfter ? tail : head).length));
    if (trimAfter ? tail.length === 0 : head.length === 0) return undefined;
    if (trimAfter) tail = tail.slice(cut);
    else head = head.slice(0, head.length - cut);
  }
}

/**
 * `host` within {@link MAX_NAME_LENGTH}: characters taken from the left of
 * its labels, a label gone whole when it would be left empty, never from
 * its last `kept` characters (the varied registrable domain). A host that
 * fits, or one that cannot be made to, is returned as it is.
 */
function withinName(host: string, kept: number): string {
  let over = host.length - MAX_NAME_LENGTH;
  let out = host;
  while (over > 0) {
    const dot = out.indexOf('.');
    if (dot < 0 || out.length - dot - 1 < kept) return host;
    // The first label loses `over` characters, or goes whole with its dot.
    out = dot > over ? out.slice(over) : out.slice(dot + 1);
    over = out.length - MAX_NAME_LENGTH;
  }
  return out;
}

/**
 * Kind (a) of {@link lookAlikes}: `host` extended by a label of the
 * canary and `.invalid`, within {@link MAX_NAME_LENGTH}: the canary
 * shortened, or else, for a host too long for a short one, the host's last
 * labels left out (a prefix check reads the host's start).
 */
function extended(host: string): string {
  const room = MAX_NAME_LENGTH - host.length - '..invalid'.length;
  if (room >= CANARY_LABEL.length) return `${host}.${CANARY_LABEL}.invalid`;
  if (room >= CANARY_FILL) return `${host}.${CANARY_LABEL.slice(-room)}.invalid`;
  let base = host;
  while (base.length > MAX_NAME_LENGTH - CANARY_FILL - '..invalid'.length && base.lastIndexOf('.') > 0) base = base.slice(0, base.lastIndexOf('.'));
  return `${base}.${CANARY_LABEL.slice(-CANARY_FILL)}.invalid`;
}

/**
 * A whole host label with each run of letters or of digits made another of
 * the same kind and length ({@link sameShape}, hex letters as any letter),
 * its hyphens kept: `co` → `qq` / `xx`; an IDN label becomes ASCII text of
 * its length (`xn--p1ai` → `qq--q7qq` / `jx--x4xx`).
 */
function sameShapeLabel(label: string, variant: 0 | 1): string {
  return label.replace(/[a-z]+|[0-9]+/g, (run) => sameShape(run, variant, false));
}

/**
 * The letters kind (f) of {@link lookAlikes} writes for a character of a
 * script, by code point range: [first, last, then two stand-in pairs as
 * {@link SAME_SHAPE}'s, one per variant] (Cyrillic `ж`/`ш` and `ю`/`ц`, Han
 * `书`/`画` and `鱼`/`鸟`...). Letters only, so that a right-to-left label
 * stays one (the Bidi rule, RFC 5893 2) and no joiner or mark is left without
 * its context.
 */
const SCRIPT_STAND_INS: ReadonlyArray<readonly [number, number, string, string, string, string]> = [
  [0x0370, 0x03ff, 'α', 'β', 'γ', 'δ'],
  [0x0400, 0x04ff, 'ж', 'ш', 'ю', 'ц'],
  [0x0530, 0x058f, 'ա', 'բ', 'գ', 'դ'],
  [0x0590, 0x05ff, 'א', 'ב', 'ג', 'ד'],
  [0x0600, 0x06ff, 'ب', 'ت', 'س', 'ش'],
  [0x0900, 0x097f, 'क', 'ख', 'ग', 'घ'],
  [0x0980, 0x09ff, 'ক', 'খ', 'গ', 'ঘ'],
  [0x0a00, 0x0a7f, 'ਕ', 'ਖ', 'ਗ', 'ਘ'],
  [0x0a80, 0x0aff, 'ક', 'ખ', 'ગ', 'ઘ'],
  [0x0b00, 0x0b7f, 'କ', 'ଖ', 'ଗ', 'ଘ'],
  [0x0b80, 0x0bff, 'க', 'ங', 'ச', 'ஞ'],
  [0x0c00, 0x0c7f, 'క', 'ఖ', 'గ', 'ఘ'],
  [0x0c80, 0x0cff, 'ಕ', 'ಖ', 'ಗ', 'ಘ'],
  [0x0d00, 0x0d7f, 'ക', 'ഖ', 'ഗ', 'ഘ'],
  [0x0d80, 0x0dff, 'ක', 'ඛ', 'ග', 'ඝ'],
  [0x0e00, 0x0e7f, 'ก', 'ข', 'ค', 'ง'],
  [0x10a0, 0x10ff, 'ა', 'ბ', 'გ', 'დ'],
  [0x3040, 0x309f, 'あ', 'い', 'う', 'え'],
  [0x30a0, 0x30ff, 'ア', 'イ', 'ウ', 'エ'],
  [0x3400, 0x4dbf, '书', '画', '鱼', '鸟'],
  [0x4e00, 0x9fff, '书', '画', '鱼', '鸟'],
  [0xac00, 0xd7a3, '가', '나', '다', '라'],
  [0x20000, 0x3134f, '书', '画', '鱼', '鸟'],
];

/**
 * Kind (f) of {@link lookAlikes} in an IDN (`xn--`) label's script: its
 * Unicode form with each character replaced by a letter of the same script
 * ({@link SCRIPT_STAND_INS}; an ASCII letter or digit as {@link sameShape},
 * a hyphen kept), differing at every character, written back in punycode,
 * one per variant (`xn--p1ai`, `рф` → `жж` and `юю`). Undefined when the
 * label is no punycode, holds a character of no script listed, or either
 * variant outgrows a DNS label: its ASCII variants stand alone then.
 */
function sameScriptLabel(label: string): [string, string] | undefined {
  const text = label.startsWith('xn--') ? unicodeLabel(label) : undefined;
  if (text === undefined) return undefined;
  const pair: string[] = [];
  for (const variant of [0, 1] as const) {
    let out = '';
    for (const char of text) {
      const code = char.codePointAt(0) as number;
      const range = SCRIPT_STAND_INS.find(([first, last]) => code >= first && code <= last);
      if (range !== undefined) {
        const [standIn, instead] = variant === 0 ? [range[2], range[3]] : [range[4], range[5]];
        out += char === standIn ? instead : standIn;
      } else if (/^[a-z0-9]$/.test(char)) out += sameShape(char, variant, false);
      else if (char === '-') out += char;
      else return undefined;
    }
    const written = `xn--${punycodeEncode(out)}`;
    if (written.length > MAX_LABEL_LENGTH) return undefined;
    pair.push(written);
  }
  return pair as [string, string];
}

/**
 * The Unicode form of an `xn--` label (`xn--bcher-kva` → `bücher`), or
 * undefined when the rest is not the punycode its decoding encodes back to
 * (an attacker's `Origin` may carry any text after `xn--`).
 */
function unicodeLabel(label: string): string | undefined {
  try {
    const unicode = punycodeDecode(label.slice(4));
    return `xn--${punycodeEncode(unicode)}` === label ? unicode : undefined;
  } catch {
    return undefined;
  }
}

/** A right-to-left character (the Hebrew, Arabic, Syriac, Thaana, NKo... blocks and their presentation forms). */
const RIGHT_TO_LEFT = /[\u0590-\u08ff\ufb1d-\ufdff\ufe70-\ufefc\u{10800}-\u{10fff}\u{1e800}-\u{1efff}]/u;

/**
 * `fill` (lowercase ASCII letters, or digits) as kinds (b), (c) and (d) of
 * {@link lookAlikes} glue it into the Unicode label text `text`: as it is,
 * or its letters in Hebrew ones (`a` to `z` → `א` to `ש`, one each) when
 * `text` holds a right-to-left character, since such a label may hold no
 * Latin letter (the Bidi rule, RFC 5893 2): a browser, `new URL` or UTS #46
 * refuses it, and the attacker could not register it either.
 */
function inScriptOf(text: string, fill: string): string {
  return RIGHT_TO_LEFT.test(text) ? fill.replace(/[a-z]/g, (letter) => String.fromCharCode(0x05d0 + letter.charCodeAt(0) - 0x61)) : fill;
}

/** A character outside ASCII. */
const NON_ASCII = /[\u0080-\u{10ffff}]/u;

/**
 * Kind (c) of {@link lookAlikes} read in Unicode: two labels, one of them an
 * IDN (`xn--`) label, made one in their Unicode forms `one` and `two`
 * around the dot's stand-in (`www` and `bücher` → `wwwqbücher`, written
 * `xn--wwwqbcher-u9a`), first characters dropped while the label is over
 * {@link MAX_LABEL_LENGTH} (a DNS label). Undefined when an `xn--` label is
 * no punycode (its form undefined), or for a right-to-left label beside
 * Latin letters (no name, by the Bidi rule).
 */
function mergedUnicode(one: string | undefined, two: string | undefined): string | undefined {
  // A right-to-left label beside a Latin one: no name anyone registers (the Bidi rule), whatever stands for the dot.
  if (one === undefined || two === undefined || (RIGHT_TO_LEFT.test(one + two) && /[a-z]/.test(one + two))) return undefined;
  let merged = `${one}${inScriptOf(one, DOT_STAND_IN)}${two}`;
  for (;;) {
    const label = NON_ASCII.test(merged) ? `xn--${punycodeEncode(merged)}` : merged;
    if (label.length <= MAX_LABEL_LENGTH) return label;
    merged = merged.slice((merged.codePointAt(0) as number) > 0xffff ? 2 : 1);
  }
}

/** An origin of `origin`'s scheme and port on another host. */
function sameSchemeAndPort(origin: ParsedOrigin): (host: string) => string {
  const port = origin.port === null ? '' : `:${origin.port}`;
  return (host) => `${origin.scheme}://${host}${port}`;
}

/**
 * The same-length stand-ins of an IPv4 octet in kind (g) of
 * {@link lookAlikes}, by its length: the first two that differ from the
 * octet are used (all are valid octets, written canonically).
 */
const OCTET_STAND_INS: Readonly<Record<number, readonly string[]>> = { 1: ['7', '3', '4'], 2: ['74', '38', '51'], 3: ['174', '238', '203'] };

/**
 * The stand-ins of one digit of an IPv4 octet in kind (g) of
 * {@link lookAlikes}, in order of preference: the first two that differ
 * from the digit and keep the octet a canonical one (no leading 0, at most
 * 255) are used (`150` → `157` and `153`, `170` and `130`).
 */
const DIGIT_STAND_INS = '7348125690';

/** The mistake behind a digit look-alike of kind (g) of {@link lookAlikes} (`192\.168\.1\.1\d\d`, a DHCP pool). */
const PART_OF_AN_OCTET = 'a range over part of an address octet: anyone on that network with an address in that range';

/** The mistake of kind (h) of {@link lookAlikes}. */
const EVERY_ADDRESS = 'an option allowing every IP address: anyone with a virtual machine serves pages at one';

/**
 * The eight 16-bit groups of an IPv6 address's text (without brackets;
 * `::` expanded, a dotted IPv4 tail made two groups), each in hex without
 * leading zeros (`0` for a zero group), or undefined when the text is no
 * IPv6 address.
 */
function ipv6Groups(text: string): string[] | undefined {
  const halves = text.split('::');
  if (halves.length > 2) return undefined;
  const groupsOf = (half: string): string[] | undefined => {
    if (half === '') return [];
    const out: string[] = [];
    const pieces = half.split(':');
    for (const [at, piece] of pieces.entries()) {
      if (at === pieces.length - 1 && piece.includes('.')) {
        if (!IPV4_HOST.test(piece)) return undefined;
        const [a, b, c, d] = piece.split('.').map(Number) as [number, number, number, number];
        if (Math.max(a, b, c, d) > 255) return undefined;
        out.push((a * 256 + b).toString(16), (c * 256 + d).toString(16));
      } else if (/^[0-9a-f]{1,4}$/.test(piece)) out.push(piece.replace(/^0+(?=.)/, ''));
      else return undefined;
    }
    return out;
  };
  const head = groupsOf(halves[0] as string);
  const tail = halves.length === 2 ? groupsOf(halves[1] as string) : [];
  if (head === undefined || tail === undefined) return undefined;
  const missing = 8 - head.length - tail.length;
  if (halves.length === 2 ? missing < 1 : missing !== 0) return undefined;
  return [...head, ...new Array<string>(missing).fill('0'), ...tail];
}

/**
 * An IPv6 address's eight groups ({@link ipv6Groups}) written as a browser
 * sends them (the WHATWG URL serializer): joined by `:`, the first longest
 * run of two or more zero groups written `::`.
 */
function ipv6Text(groups: readonly string[]): string {
  let runAt = -1;
  let runLength = 1;
  for (let i = 0; i < groups.length; i++) {
    let end = i;
    while (end < groups.length && groups[end] === '0') end++;
    if (end - i > runLength) [runAt, runLength] = [i, end - i];
    if (end > i) i = end;
  }
  if (runAt < 0) return groups.join(':');
  let text = '';
  for (let i = 0; i < runAt; i++) text += `${groups[i] as string}:`;
  text = runAt === 0 ? '::' : `${text}:`;
  for (let i = runAt + runLength; i < groups.length; i++) text += i === runAt + runLength ? (groups[i] as string) : `:${groups[i] as string}`;
  return text;
}

/**
 * Kinds (g) and (h) of {@link lookAlikes}: for an IP host, each part of the
 * address varied, each confirmed by a second variant (an IPv4 octet made
 * another of its length, each of its tens and units digits made another
 * digit; each of the eight IPv6 groups, the ones `::` hides included, made
 * another non-zero group), but the parts that keep a loopback address
 * loopback (the machine's own: `127.0.0.1`'s last three octets, `[::1]`);
 * then, for every origin, an address of the documentation ranges of its
 * family (IPv4 for a domain name), confirmed for IPv4 by one of another
 * range.
 */
function addressLookAlikes(origin: ParsedOrigin): LookAlike[] {
  const { host } = origin;
  const at = sameSchemeAndPort(origin);
  const found: LookAlike[] = [];
  const ipv6 = host.startsWith('[');
  const mistake = 'a wildcard over IP addresses: anyone on that network or with an address in that range';
  const groups = ipv6 ? ipv6Groups(host.slice(1, -1)) : undefined;
  if (groups !== undefined && groups.join() !== '0,0,0,0,0,0,0,1') {
    // (g) Each of the eight groups, zeros included, made a non-zero one differing at every hex digit (`0` → `7`, `4`;
    // `fd12` → `ef77`, `cc44`), the address written as a browser writes it (`[fd12::]` → `[fd12:7::]`): eight at most.
    for (let i = 0; i < groups.length; i++) {
      const group = groups[i] as string;
      const variant = (which: 0 | 1) => {
        const other = groups.slice();
        other[i] = sameShape(group, which);
        return at(`[${ipv6Text(other)}]`);
      };
      found.push({ origin: variant(0), confirm: variant(1), mistake });
    }
  } else if (IPV4_HOST.test(host)) {
    // (g) Each octet made another of its length, and each digit of a longer octet another digit (a loopback address's
    // last three octets stay: every one is this machine). A hundreds digit has at most one other (1 or 2), so it is
    // never varied alone (a list of `.150` and `.250` is two devices): at most eight digit look-alikes (tens and units).
    const octets = host.split('.');
    const parts = octets[0] === '127' ? 1 : 4;
    for (let i = 0; i < parts; i++) {
      const octet = octets[i] as string;
      const before = i === 0 ? '' : `${octets.slice(0, i).join('.')}.`;
      const after = i === 3 ? '' : `.${octets.slice(i + 1).join('.')}`;
      const [first, second] = (OCTET_STAND_INS[octet.length] ?? []).filter((standIn) => standIn !== octet) as [string, string];
      found.push({ origin: at(before + first + after), confirm: at(before + second + after), mistake });
      // The digits of an octet of two or three digits, a hundreds digit's excepted (a one-digit octet's swap is its digit's).
      for (let digit = octet.length === 2 ? 0 : 1; digit < octet.length; digit++) {
        let one: string | undefined;
        for (const standIn of DIGIT_STAND_INS) {
          if (standIn === octet[digit] || (digit === 0 && standIn === '0')) continue;
          const other = octet.slice(0, digit) + standIn + octet.slice(digit + 1);
          if (Number(other) > 255) continue;
          if (one === undefined) {
            one = other;
            continue;
          }
          found.push({ origin: at(before + one + after), confirm: at(before + other + after), mistake: PART_OF_AN_OCTET });
          break;
        }
      }
    }
  }
  // (h) An address anyone could be given, of the origin's family.
  found.push(ipv6 ? { origin: at(CANARY_IPV6), mistake: EVERY_ADDRESS } : { origin: at(CANARY_IPV4[0]), confirm: at(CANARY_IPV4[2]), mistake: EVERY_ADDRESS });
  return found;
}

/**
 * tldts's reading of a host, the private section included, when it has a
 * registrable domain (eTLD+1) that ends it: `domain` is that domain, and
 * `isIcann`/`isPrivate` say whether the list holds its suffix (neither for
 * an unlisted top-level domain: `.example`, `.internal`); undefined for an
 * IP address or a host without one.
 */
function readHost(host: string): ReturnType<typeof parse> | undefined {
  if (host.startsWith('[') || IPV4_HOST.test(host)) return undefined;
  const read = parse(host, { allowPrivateDomains: true, extractHostname: false });
  return read.domain === null || !host.endsWith(read.domain) ? undefined : read;
}

/** Where a host's registrable domain (eTLD+1, the private section included) starts, or -1 for an IP address or a host without one. */
function registrableStart(host: string): number {
  const read = readHost(host);
  return read === undefined ? -1 : host.length - (read.domain as string).length;
}

/**
 * The origins of which `origin` is a look-alike of kind (c) of
 * {@link lookAlikes}, each with that kind's own look-alike: `origin` with one
 * character of its registrable domain made a dot, and made the letter of
 * (c) (`https://www-example.com` → `https://www.example.com` and
 * `https://wwwqexample.com`), hosts without an empty label. A pattern that
 * allows `origin` and both of a pair has an unescaped dot, seen from the
 * look-alike's side: what a request from the look-alike itself is checked
 * against. Both are asked so that a pattern listing two real domains that
 * differ by one dot (`e-shop.com`, `e.shop.com`) is not taken for one.
 */
function dottedOriginals(origin: ParsedOrigin): Array<readonly [string, string]> {
  const { host } = origin;
  const start = registrableStart(host);
  if (start < 0) return [];
  const at = sameSchemeAndPort(origin);
  const found: Array<readonly [string, string]> = [];
  for (let i = start + 1; i < host.length - 1; i++) {
    if (host[i] === '.' || host[i - 1] === '.' || host[i + 1] === '.') continue;
    const [before, after] = [host.slice(0, i), host.slice(i + 1)];
    found.push([at(`${before}.${after}`), at(`${before}${DOT_STAND_IN}${after}`)]);
  }
  return found;
}

/** The refusal of an option that allows `allowed` and also its look-alike `twin`, with credentials. */
function lookAlikeRefusal(what: string, allowed: string, twin: LookAlike): AmpCorsError {
  return new AmpCorsError(
    'unsafe-configuration',
    `${what} allows ${allowed} and also ${twin.origin}, a look-alike anyone could register (${twin.mistake}); together with credentials every such site could read credentialed responses: escape every dot and anchor both ends (e.g. /^https:\\/\\/(www\\.)?example\\.com$/), list exact origins, or set credentials: false`,
  );
}

/** Host-like runs of a pattern's source (its escapes undone): where {@link patternWitnesses} looks for the origins it was written for. */
const HOST_RUN = /[a-z0-9_-]+(?:\.[a-z0-9_-]+)+(?::[0-9]{1,5})?/g;
/** At most this many runs of one pattern are tried at construction (a bound on a huge pattern's cost). */
const MAX_WITNESS_RUNS = 16;
/** The ways a host run is tried as an origin. */
const WITNESS_PREFIXES: readonly string[] = ['https://', 'http://', 'https://www.'];

/**
 * Origins a pattern was evidently written for, found without a request:
 * its source, escapes undone and `^`/`$` dropped, when that is an origin
 * (a literal written as a pattern), and each host-like run of the source
 * over `https`, `http` and `https://www.`; only canonical origins the
 * pattern itself allows are kept.
 */
function patternWitnesses(pattern: RegExp): string[] {
  const text = pattern.source.replace(/\\([./:-])/g, '$1');
  const candidates = new Set<string>([text.replace(/^\^/, '').replace(/\$$/, '')]);
  for (const run of (text.toLowerCase().match(HOST_RUN) ?? []).slice(0, MAX_WITNESS_RUNS)) {
    for (const prefix of WITNESS_PREFIXES) candidates.add(prefix + run);
  }
  return [...candidates].filter((candidate) => parseOrigin(candidate).ok && pattern.test(candidate));
}

/** The first look-alike of `allowed` that `allows` allows too, if any (`allowed` must be canonical). */
function allowedLookAlike(allowed: ParsedOrigin, allows: (origin: string) => boolean): LookAlike | undefined {
  return lookAlikes(allowed).find((twin) => allows(twin.origin) && (twin.confirm === undefined || allows(twin.confirm)));
}

/** Origins whose look-alikes a pattern option was found not to allow, remembered per option: at most this many (then forgotten at once). */
const MAX_CHECKED_ORIGINS = 256;

/**
 * The `origin` option of the `cors` and `@koa/cors` packages, as data: an
 * exact origin, `'*'`, a RegExp, `true` (any origin), `false` (none), or an
 * array of strings and RegExps.
 */
export type OriginOption = boolean | string | RegExp | ReadonlyArray<boolean | string | RegExp>;

/** How {@link compileOriginOption} treats an option. */
export interface OriginOptionMode {
  /** Whether responses carry `Access-Control-Allow-Credentials: true`. */
  readonly credentials: boolean;
  /**
   * True when the option is a per-request answer of the application's own
   * origin function: `true` then means "this origin was checked and is
   * allowed", which is safe with credentials. A static `true` or `'*'` with
   * credentials, and `'*'` from a function with credentials, are refused.
   */
  readonly perRequest?: boolean;
}

/** A compiled origin option: true when the raw `Origin` is allowed by it. */
export type OriginMatcher = (origin: string) => boolean;

/** The matcher of an option that allows any origin (`true`, `'*'`): its verdicts say `any-origin`, since nothing was checked. */
const ANY_ORIGIN: OriginMatcher = () => true;

/**
 * Compiles an {@link OriginOption} into a matcher. A RegExp is cloned
 * without its `g` and `y` flags, so that `lastIndex` never makes it
 * alternate between allow and deny. Strings must be canonical origins (a
 * trailing slash or uppercase would never match a browser's `Origin`).
 *
 * With credentials, an option that allows any origin is refused: `true`
 * (unless it is a per-request answer, see {@link OriginOptionMode}), `'*'`,
 * and a RegExp that matches one of the canary origins (random hosts under
 * `.invalid`, `.com`, `.org` and the AMP cache, and random addresses of the
 * IPv4 and IPv6 documentation ranges, over `https`, `http` and a port): a
 * pattern whose source is `.*`, `^https:`, `\.com$` or
 * `\d+\.\d+\.\d+\.\d+` trusts origins its author never named. So is,
 * with credentials, a pattern that allows an origin and one of its
 * {@link lookAlikes} (a suffix match without its dot, an unescaped dot, no
 * end anchor, a wildcard inside the registrable domain or over its
 * top-level domain, a wildcard over IP addresses): at construction when
 * one of the origins it was evidently written for ({@link patternWitnesses})
 * shows it; otherwise the matcher throws that refusal for each origin the
 * pattern allows along with a look-alike (the request fails), and
 * remembers, bounded, the origins that passed. A per-request answer
 * ({@link OriginOptionMode}) is not asked about look-alikes here: the
 * function guard asks the function itself.
 *
 * @throws AmpCorsError `unsafe-configuration` for any-origin or a
 * look-alike with credentials (the matcher too, for a look-alike),
 * `invalid-origin` for a string that is no canonical origin,
 * `invalid-option` for other values.
 */
export function compileOriginOption(option: OriginOption, mode: OriginOptionMode): OriginMatcher {
  const items: ReadonlyArray<unknown> = Array.isArray(option) ? option : [option];
  const exact = new Set<string>();
  const patterns: RegExp[] = [];
  let any = false;
  for (const item of items) {
    if (item === true || item === '*') {
      if (mode.credentials && (item === '*' || !mode.perRequest)) {
        throw anyOriginWithCredentials(`origin ${item === '*' ? "'*'" : 'true (reflect any origin)'}`);
      }
      any = true;
    } else if (item === false) {
      continue;
    } else if (typeof item === 'string') {
      const parsed = parseOrigin(item);
      if (!parsed.ok) throw new AmpCorsError('invalid-origin', `origin ${JSON.stringify(item.slice(0, 80))} is not a canonical origin (${parsed.reason})`);
      exact.add(item);
    } else if (item instanceof RegExp) {
      const pattern = item.global || item.sticky ? new RegExp(item.source, item.flags.replace(/[gy]/g, '')) : item;
      // A pattern that matches a canary matches origins nobody named (`.*`, `^https:`, `\.com$`): with credentials, refused like `true`.
      const canary = mode.credentials
        ? CANARIES.find(({ origin, confirm }) => pattern.test(origin) && (confirm === undefined || pattern.test(confirm)))
        : undefined;
      if (canary !== undefined) throw anyOriginWithCredentials(`origin ${String(item).slice(0, 80)} (${canaryNote(canary.origin)})`);
      // A pattern that allows an origin it was written for and one of its look-alikes (`/example\.com$/`): refused now.
      if (mode.credentials && !mode.perRequest) {
        for (const witness of patternWitnesses(pattern)) {
          const twin = allowedLookAlike(parseOrigin(witness) as ParsedOrigin, (origin) => pattern.test(origin));
          if (twin !== undefined) throw lookAlikeRefusal(`origin ${String(item).slice(0, 80)}`, witness, twin);
        }
      }
      patterns.push(pattern);
    } else {
      throw new AmpCorsError('invalid-option', 'origin must be a string, a RegExp, a boolean or an array of strings and RegExps');
    }
  }
  if (any) return ANY_ORIGIN;
  if (!mode.credentials || mode.perRequest || patterns.length === 0) return (origin) => exact.has(origin) || patterns.some((pattern) => pattern.test(origin));
  // With credentials, an origin allowed by a pattern is allowed only when that pattern allows none of its look-alikes
  // (a pattern construction could not judge, e.g. `/^https:\/\/(app|api)\.example\.com/`); the request fails otherwise.
  const checked = new Set<string>();
  // A pattern once shown to allow a look-alike stays refused (a fresh error each time: adapters may decorate it).
  const unsafe = new Map<RegExp, readonly [string, LookAlike]>();
  const refusalOf = (pattern: RegExp, [allowed, twin]: readonly [string, LookAlike]) =>
    lookAlikeRefusal(`origin ${String(pattern).slice(0, 80)}`, allowed, twin);
  return (origin) => {
    if (exact.has(origin) || checked.has(origin)) return true;
    const allowing = patterns.filter((pattern) => pattern.test(origin));
    if (allowing.length === 0) return false;
    const parsed = parseOrigin(origin);
    // Callers judge canonical origins only (judgeWithOriginMatcher); anything else is denied, never guessed at.
    if (!parsed.ok) return false;
    for (const pattern of allowing) {
      const known = unsafe.get(pattern);
      if (known !== undefined) throw refusalOf(pattern, known);
      const allows = (other: string) => pattern.test(other);
      // The origin's look-alikes, then the origins it is a look-alike of (a request from `wwwxexample.com` itself).
      const twin = allowedLookAlike(parsed, allows);
      const original = twin === undefined ? dottedOriginals(parsed).find(([dotted, lettered]) => allows(dotted) && allows(lettered)) : undefined;
      const found =
        twin !== undefined ? ([origin, twin] as const) : original !== undefined ? ([original[0], { origin, mistake: 'an unescaped dot' }] as const) : undefined;
      if (found !== undefined) {
        unsafe.set(pattern, found);
        checked.clear();
        throw refusalOf(pattern, found);
      }
    }
    // Remembered, bounded: the key is the whole Origin, and forgetting only costs the check again.
    if (checked.size >= MAX_CHECKED_ORIGINS) checked.clear();
    checked.add(origin);
    return true;
  };
}

function denied(origin: string | null, reason: DenyReason, detail: string): Verdict {
  return { allowed: false, origin, reason, detail };
}

/**
 * Judges a request with a compiled origin option, in the core {@link Verdict}
 * model: an `Origin` that is not one canonical origin is denied before the
 * option is consulted (nothing unparsed is ever reflected); a matching origin
 * is allowed as a publisher origin, or as `any-origin` when the option
 * allows every origin (`true`, `'*'`: nothing was checked); `AMP-Same-Origin: true` without `Origin`
 * is same-origin; a present `__amp_source_origin` must itself match.
 */
export function judgeWithOriginMatcher(matcher: OriginMatcher, origin: string | null | undefined, context?: VerifyContext): Verdict {
  const source = context?.sourceOrigin;
  const sourceOk = source === undefined || source === null || (typeof source === 'string' && parseOrigin(source).ok && matcher(source));
  if (!sourceOk)
    return denied(typeof origin === 'string' && origin !== '' ? origin : null, 'source-origin-mismatch', '__amp_source_origin is not an allowed origin');
  const extra = typeof source === 'string' ? { sourceOrigin: source } : {};
  if (origin === undefined || origin === null || origin === '') {
    if (context?.ampSameOrigin === 'true') return { allowed: true, origin: null, via: 'same-origin', reason: 'same-origin', ...extra };
    return denied(null, 'missing', 'no Origin header and no AMP-Same-Origin: true');
  }
  const parsed = parseOrigin(origin);
  if (!parsed.ok) return denied(origin, parsed.reason, parsed.detail);
  if (!matcher(origin)) return denied(origin, 'unknown-origin', 'not allowed by the origin option');
  if (matcher === ANY_ORIGIN) return { allowed: true, origin, via: 'any', reason: 'any-origin', ...extra };
  return { allowed: true, origin, via: 'publisher', reason: 'publisher-origin', ...extra };
}

// ---------------------------------------------------------------------------
// Origin functions (issue #14 item 3).

/**
 * Asks a drop-in origin function about one origin (the adapter's wrapper of
 * `cors`'s `origin(origin, callback)` or `@koa/cors`'s `origin(ctx)`): returns
 * the function's answer as an {@link OriginOption} (`false` or `undefined`
 * for none), or a Promise of it; may throw.
 */
export type OriginAsk = (origin: string) => unknown;

/** What {@link guardOriginFunction} returns: a source of verdicts for one request (a VerdictSource of cors-policy.ts). */
export type OriginFunctionSource = (
  ask?: OriginAsk,
  withCredentials?: boolean,
) => {
  verify(origin: string | null | undefined, context?: VerifyContext): Verdict | Promise<Verdict>;
};

/**
 * How long the guard waits for its questions (canaries, look-alikes, a
 * `__amp_source_origin`) before it stops waiting. What silence then means
 * depends on the question: a `__amp_source_origin` not answered is not
 * allowed (the request is denied), a canary or look-alike not answered is
 * unknown, and unknown never yields credentials ({@link unansweredRefusal}).
 */
export const QUESTION_TIMEOUT_MS = 2000;

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return typeof (value as { then?: unknown } | null)?.then === 'function';
}

/** Continues with a value now, or once its Promise settles (synchronous answers stay synchronous). */
function then<A, B>(value: A | PromiseLike<A>, next: (settled: A) => B | Promise<B>): B | Promise<B> {
  return isThenable(value) ? Promise.resolve(value).then(next) : next(value as A);
}

/** Whether an answer allows `origin`, read as the `cors` package reads it; a malformed answer allows nothing. */
function answerAllows(answer: unknown, origin: string): boolean {
  try {
    return compileOriginOption((answer ?? false) as OriginOption, { credentials: false })(origin);
  } catch {
    return false;
  }
}

/**
 * Asks about `origin`, without a bound: true when the function answered that
 * `origin` is allowed (now, or once its Promise settles); a throw or a
 * rejection is "not allowed". Never rejects.
 */
function answerOf(ask: OriginAsk, origin: string): boolean | Promise<boolean> {
  let answer: unknown;
  try {
    answer = ask(origin);
  } catch {
    return false;
  }
  if (!isThenable(answer)) return answerAllows(answer, origin);
  return Promise.resolve(answer).then(
    (value) => answerAllows(value, origin),
    () => false,
  );
}

/**
 * Asks about `origin` with a bound: true only when the function answered
 * within {@link QUESTION_TIMEOUT_MS} that `origin` is allowed. A throw, a
 * rejection or silence is "not allowed": only for a question whose "no"
 * denies (the `__amp_source_origin`), never for one whose "no" lets
 * credentials through ({@link firstAllowed} tells silence apart).
 */
function allowsWithin(ask: OriginAsk, origin: string): boolean | Promise<boolean> {
  const answer = answerOf(ask, origin);
  if (!isThenable(answer)) return answer;
  return new Promise<boolean>((resolve) => {
    const timer = setTimeout(() => resolve(false), QUESTION_TIMEOUT_MS);
    void answer.then((allowed) => {
      clearTimeout(timer);
      resolve(allowed);
    });
  });
}

/** A guard question (a canary, a look-alike or its confirmation) the function left unanswered within {@link QUESTION_TIMEOUT_MS}: unknown. */
export interface Unanswered {
  /** The origin asked about. */
  readonly unanswered: string;
  /** Whether it is a canary (otherwise a look-alike of the allowed origin, or its same-shape confirmation). */
  readonly canary: boolean;
}

/** The refusals of {@link unansweredRefusal}, told apart from refusals of unsafe answers by {@link isUnansweredRefusal}. */
const UNANSWERED_REFUSALS = new WeakSet<object>();

/**
 * The failure of a credentialed request whose guard question got no answer
 * within {@link QUESTION_TIMEOUT_MS}: unknown never yields credentials. It
 * fails this request only: a slow spell must not refuse the application for
 * good, so it is not remembered (later requests are asked again).
 *
 * @param what - the function's name in the message (`the origin function`, `the options delegate`)
 * @param allowed - the origin it allowed
 * @param question - what it was asked about and did not answer
 */
export function unansweredRefusal(what: string, allowed: string, question: Unanswered): AmpCorsError {
  const kind = question.canary ? 'a canary origin no configuration names' : `a look-alike of ${allowed} anyone could register`;
  const error = new AmpCorsError(
    'unsafe-configuration',
    `${what} allowed ${allowed} with credentials but did not answer about ${question.unanswered} (${kind}) within ${QUESTION_TIMEOUT_MS / 1000} s; credentials withheld: whether it allows every origin or that look-alike too is unknown, so this request fails (the next one is asked again); answer within ${QUESTION_TIMEOUT_MS / 1000} s (e.g. cache a remote allow-list), list exact origins, or set credentials: false`,
  );
  UNANSWERED_REFUSALS.add(error);
  return error;
}

/**
 * The failure of a credentialed request whose guard questions were about a
 * request holding a value too costly to rewrite (asked-origin.ts's work
 * budget ran out, {@link exhaustedRewrites}): the question copies may still
 * show the real origin, or show none, so the answers are unknown, and
 * unknown never yields credentials. Like {@link unansweredRefusal}, it fails
 * this request only and is not remembered: a request crafted to exhaust the
 * budget must not refuse credentials to later ones.
 *
 * @param what - the function's name in the message
 * @param allowed - the origin it allowed
 */
export function exhaustedRefusal(what: string, allowed: string): AmpCorsError {
  const error = new AmpCorsError(
    'unsafe-configuration',
    `${what} allowed ${allowed} with credentials, but the request holds a value too costly to rewrite for its look-alike questions (escapes of many kinds, over ampcors's work budget); credentials withheld from this request (the next one is asked again)`,
  );
  UNANSWERED_REFUSALS.add(error);
  return error;
}

/** True for an error of {@link unansweredRefusal} (a question left unanswered) or {@link exhaustedRefusal}, false for every other error. */
export function isUnansweredRefusal(error: unknown): boolean {
  return typeof error === 'object' && error !== null && UNANSWERED_REFUSALS.has(error);
}

/** A canary or look-alike question of the guard. */
type Question = string | LookAlike;

/** The origin a {@link Question} asks about. */
function originOf(question: Question): string {
  return typeof question === 'string' ? question : question.origin;
}

/**
 * Asks questions in turn through `ask`, and asks once more, at once, each
 * one answered "no" right after a "yes" (in the order asked; `afterYes` says
 * what the call before the first one answered): a function whose answer
 * depends on its previous call says "no" to whatever follows a "yes". The
 * usual one tests a RegExp with the `g` or `y` flag that it holds
 * (`o => re.test(o)`): `test()` starts at `lastIndex`, which a match leaves
 * at its end, so the next origin is not matched; a "no" resets it to 0, so
 * the second asking is answered as the pattern reads (attacker's review,
 * session 16: every look-alike confirmation, asked right after its
 * look-alike was allowed, was a "no", and `example\.[a-z]{2,6}` passed).
 * ampcors clones an `origin` RegExp without those flags, but cannot clone
 * one a function holds. A "yes" is taken as it is (such a pattern's "yes" is
 * a match). For answers that arrive later, "right after" is the order the
 * questions were asked in: the order a function runs them in when it reads
 * the origin synchronously or in a microtask; an asynchronous function that
 * waits on I/O first runs them in any order, mixed with other requests'
 * calls, and is not made reliable by this. A pure function pays one question
 * more per "no" after a "yes": the first question after an allowed origin's
 * own "yes", and a confirmation that was not allowed. After a "yes" already
 * known, a pending answer is asked again without waiting for it, so that a
 * slow function is not waited on twice (the questions keep their one bound).
 *
 * @param ask - asks about one origin; never throws nor rejects
 * @param afterYes - whether the call just before the first question was answered "yes"
 * @param allows - whether an answer is a "yes" (by default, `true` is)
 * @returns asks about one origin, in turn with the others it asks
 */
export function askedInTurn<A>(
  ask: (origin: string) => A | Promise<A>,
  afterYes: boolean,
  allows: (answer: A) => boolean = (answer) => answer === true,
): (origin: string) => A | Promise<A> {
  let previous: boolean | Promise<boolean> = afterYes;
  const call = (origin: string): A | Promise<A> => {
    const answer = ask(origin);
    previous = then(answer, allows);
    return answer;
  };
  return (origin) => {
    const before = previous;
    const answer = call(origin);
    // After a known "yes", an answer still pending is asked again at once: its "no" would otherwise cost a second wait.
    if (before === true && isThenable(answer)) {
      const again = call(origin);
      return then(answer, (settled) => (allows(settled) ? settled : again));
    }
    return then(answer, (settled) => (allows(settled) ? settled : then(before, (yes) => (yes ? call(origin) : settled))));
  };
}

/**
 * Asks about each question (a canary origin, or a look-alike): the first one
 * allowed, `undefined` when every one was answered "not allowed", or the
 * first one left {@link Unanswered} when none was allowed. A synchronous yes
 * ends the questions at once; answers still pending are awaited together
 * under one bound, {@link QUESTION_TIMEOUT_MS} from now, confirmations
 * included, and a yes ends the wait. A look-alike's `confirm`
 * ({@link LookAlike}) is asked only once the look-alike was allowed. The
 * questions follow the allowed origin's own "yes", and each "no" right after
 * a "yes" is asked once more ({@link askedInTurn}).
 */
function firstAllowed(ask: OriginAsk, questions: readonly Question[]): Question | Unanswered | undefined | Promise<Question | Unanswered | undefined> {
  const inTurn = askedInTurn((origin) => answerOf(ask, origin), true);
  const answers: Array<boolean | Promise<boolean>> = [];
  // A confirmation being asked, by its question's index (for the name of an unanswered one).
  const confirming: string[] = [];
  for (let at = 0; at < questions.length; at++) {
    const question = questions[at] as Question;
    const asked = inTurn(originOf(question));
    // A look-alike with a second of its shape counts once both are allowed (the second asked only then).
    const confirm = typeof question === 'string' ? undefined : question.confirm;
    const answer =
      confirm === undefined
        ? asked
        : then(asked, (yes) => {
            if (!yes) return false;
            confirming[at] = confirm;
            return inTurn(confirm);
          });
    if (answer === true) return question;
    answers.push(answer);
  }
  if (!answers.some(isThenable)) return undefined;
  return new Promise((resolve) => {
    let left = answers.filter(isThenable).length;
    const settled = answers.map((answer) => (isThenable(answer) ? undefined : answer));
    const timer = setTimeout(() => {
      const at = settled.indexOf(undefined);
      const question = questions[at] as Question;
      resolve({ unanswered: confirming[at] ?? originOf(question), canary: typeof question === 'string' });
    }, QUESTION_TIMEOUT_MS);
    for (const [at, answer] of answers.entries()) {
      if (!isThenable(answer)) continue;
      void answer.then((yes) => {
        settled[at] = yes;
        left -= 1;
        if (!yes && left > 0) return;
        clearTimeout(timer);
        resolve(yes ? questions[at] : undefined);
      });
    }
  });
}

const NOTHING: OriginMatcher = () => false;

/**
 * Guards a drop-in origin function, so that a function allowing every origin
 * is treated like `origin: true` (refused with credentials) and no answer
 * pairs credentials with an origin the function did not choose:
 *
 * 1. At construction, with credentials, `probe` is asked about every canary
 *    origin (origins no configuration can name; a "no" right after a "yes"
 *    is asked once more, {@link askedInTurn}). An answer allowing one —
 *    `true`, `'*'`, the canary itself, a pattern matching it — refuses the
 *    configuration with the error of `true` + credentials: thrown here when
 *    the function answered synchronously; when it answers later (callback,
 *    Promise), every request from then on fails with that error, however
 *    late it comes (no request waits for these answers, so they need no
 *    bound). A function that throws or never answers does not hold
 *    construction, and its silence refuses nothing here: a slow start (a
 *    remote allow-list not reached yet) must not refuse the application for
 *    good, and 3 asks every credentialed allow again.
 * 2. Per request, the function is asked about the request's `Origin` (its
 *    answer compiled as a per-request {@link OriginOption}: `'*'` or a
 *    canary-matching RegExp with credentials is an error), and separately
 *    about a `__amp_source_origin` that differs from it: an answer about one
 *    origin never vouches for another, and a source origin not answered
 *    within {@link QUESTION_TIMEOUT_MS} is not allowed (the request is
 *    denied). The `Origin`'s own question has no bound, as in `cors`. It is asked only when an answer can
 *    matter: for a canonical `Origin`, or for the source origin of a
 *    same-origin request (`AMP-Same-Origin: true` without `Origin`).
 * 3. With credentials, an allowed `Origin` gets its answer only when the
 *    function, asked about a canary of the same scheme and port and about
 *    the origin's {@link lookAlikes} (`o.endsWith('example.com')` also
 *    allows `https://<canary>example.com`, `o.startsWith('https://example.com')`
 *    `https://example.com.<canary>.invalid`), allows none of them; when it
 *    allows one, the request fails with the error of 1 or one naming the
 *    look-alike. The questions are asked together once the `Origin` was
 *    allowed, and their pending answers awaited under one bound,
 *    {@link QUESTION_TIMEOUT_MS}, confirmations included: a question still
 *    unanswered then is unknown, and unknown never yields credentials: the
 *    request fails ({@link unansweredRefusal}), this one only (a slow spell
 *    does not refuse later requests, which are asked again). So a function
 *    answering in t seconds (t up to 2) delays an allowed credentialed
 *    request by 2t; a slower one fails it after t + 2 s. They are not asked
 *    alongside the `Origin`'s own question: that would ask them about every
 *    request, denied ones included (ten questions for each `Origin` any
 *    client sends instead of one, and as many side effects or remote
 *    lookups). This costs more questions per allowed credentialed
 *    request: the canary, and the look-alikes: two, plus one per dot from
 *    the one left of the registrable domain, two for the label continued,
 *    one per hyphen side of its label and one per run of letters or digits
 *    (at most eight each), two more for an IDN label (as ASCII text, and
 *    the canary glued to its Unicode form), one more per dot next to an IDN
 *    label (the Unicode forms made one), one
 *    per label of the public suffix varied (the top-level domain, and `co`
 *    of co.uk, `vercel` of vercel.app), for a suffix the list holds two
 *    for it replaced by generic top-level domains and, for one of two
 *    labels, one for it replaced by other rules of its top-level domain,
 *    one for an address of the
 *    documentation ranges; for an IP host: the canary, the host
 *    extended (IPv4 only), one per octet and one per tens or units digit of
 *    an octet of two or three digits (at most eight), or one per IPv6 group
 *    (eight), and one for the documentation address (twelve questions for
 *    `www.example.com`, fifteen for `www.example.co.uk`, twenty-two for
 *    `myapp-abc123xyz-team.vercel.app`, thirteen for `http://192.168.1.20`,
 *    six for `http://127.0.0.1:3000`, ten for any IPv6 address but
 *    `[::1]`, two for it; fewer after a synchronous yes; a
 *    same-shape look-alike that was allowed adds its confirmation; and a
 *    question answered "no" right after a "yes" is asked once more,
 *    {@link askedInTurn}: the first one, after the origin's own "yes", so
 *    one more for every allowed credentialed request): a
 *    function with side effects (logging,
 *    counting, a database) sees them, and a function that waits sees them
 *    all at once. It holds for a function that starts allowing everything
 *    after construction. Once a look-alike
 *    was allowed, every credentialed allow fails (a request from the
 *    look-alike itself, `wwwxexample.com` for an unescaped dot, may have no
 *    look-alike the function allows).
 *
 * Not covered, by design: a function written to recognise the canaries;
 * a function whose unescaped dot is first met from the look-alike's side
 * (`wwwxexample.com` asks nothing `www.example.com` would show: that
 * request is answered, every one after the publisher's first is not;
 * a static pattern is checked from both sides); a look-alike none of these
 * shapes reaches (`/^https:\/\/(www|shop)\.?example\.com$/` allowing
 * `shopexample.com`, and the others {@link lookAlikes} names); a domain
 * name's request is asked about an IPv4 documentation address, not an IPv6
 * one (one question more, not two), so a function that answers
 * asynchronously and allows a site and every IPv6 address answers the
 * site's requests until its construction answers arrive (a request from an
 * IPv6 address is asked about IPv6 ones); a function whose answer depends
 * on earlier calls otherwise than {@link askedInTurn} undoes (a memo around
 * a `g` RegExp keeps its first, wrong, answer; a counter), or that waits on
 * I/O before testing a `g` or `y` RegExp (concurrent requests' calls come
 * between its questions): remove the flags, ampcors cannot clone a RegExp
 * the function holds.
 *
 * @param probe - asks the function about an origin outside any request (construction)
 * @param credentials - whether responses may carry credentials
 * @returns a factory of per-request sources: `ask` asks in the request's context (default `probe`), `withCredentials` overrides `credentials` for that request
 * @throws AmpCorsError `unsafe-configuration` when, with credentials, the function synchronously allows a canary (its sources' `verify` throws it, or rejects with it, for a canary or look-alike allowed, or left unanswered)
 */
export function guardOriginFunction(probe: OriginAsk, credentials: boolean): OriginFunctionSource {
  const refusal = (canary: string) => anyOriginWithCredentials(`the origin function (${canaryNote(canary)})`);
  // 1. The construction probe.
  let unsafe: string | undefined;
  // 3. An allowed origin and its look-alike the function allowed too, once seen: every credentialed allow fails from then on.
  let shown: readonly [string, LookAlike] | undefined;
  if (credentials) {
    // A canary with a confirmation counts once both are allowed (the confirmation asked only then); a "no" right after a "yes" is asked again.
    const inTurn = askedInTurn((origin) => answerOf(probe, origin), false);
    const answers = CANARIES.map(
      ({ origin, confirm }) => [origin, then(inTurn(origin), (yes) => (yes && confirm !== undefined ? inTurn(confirm) : yes))] as const,
    );
    const now = answers.find(([, allowed]) => allowed === true);
    if (now !== undefined) throw refusal(now[0]);
    for (const [canary, allowed] of answers) {
      if (isThenable(allowed)) {
        void allowed.then((yes) => {
          if (yes) unsafe ??= canary;
        });
      }
    }
  }
  return (ask = probe, withCredentials = credentials) => ({
    verify(raw, context) {
      if (unsafe !== undefined) throw refusal(unsafe);
      const parsed = parseOrigin(raw);
      const origin = parsed.ok ? (raw as string) : null;
      const sourceRaw = context?.sourceOrigin;
      const source = typeof sourceRaw === 'string' && parseOrigin(sourceRaw).ok ? sourceRaw : null;
      // Asked only when an answer can matter: a canonical Origin, or the source origin of a same-origin request.
      const sameOrigin = !parsed.ok && parsed.reason === 'missing' && context?.ampSameOrigin === 'true';
      if (origin === null && !(sameOrigin && source !== null)) return judgeWithOriginMatcher(NOTHING, raw, context);
      // 2–3. A question whose copy of the request ran out of rewriting budget is unknown (counted from here: the Origin's own
      // question copies nothing; a concurrent request's exhausted rewrite may fail this one too, never pass it).
      const budget = exhaustedRewrites();
      // 2. The Origin's own answer, then the source origin's.
      return then(origin === null ? false : ask(origin), (answer) => {
        const matcher = origin === null ? NOTHING : compileOriginOption((answer ?? false) as OriginOption, { credentials: withCredentials, perRequest: true });
        const originAllowed = origin !== null && matcher(origin);
        const sourceAllowed = source === null ? false : source === origin ? originAllowed : allowsWithin(ask, source);
        return then(sourceAllowed, (sourceAnswer) => {
          // An unknown source origin is not allowed.
          const sourceOk = sourceAnswer && (source === origin || exhaustedRewrites() === budget);
          const judged = judgeWithOriginMatcher((candidate) => (candidate === origin ? originAllowed : candidate === source && sourceOk), raw, context);
          // An answer that allows any origin (`true`, `'*'`) checked nothing: the verdict says so (a drop-in may answer it with the literal *).
          const verdict: Verdict =
            judged.allowed && matcher === ANY_ORIGIN && judged.origin === origin ? { ...judged, via: 'any', reason: 'any-origin' } : judged;
          if (!verdict.allowed || !parsed.ok || !withCredentials) return verdict;
          // 3. Credentials only when the function allows neither a canary nor a look-alike of the origin too (and never did).
          if (shown !== undefined) throw lookAlikeRefusal('the origin function', ...shown);
          const canary = canaryLike(parsed);
          return then(firstAllowed(ask, [canary, ...lookAlikes(parsed)]), (found) => {
            // Unknown: this request fails, and nothing is remembered (whatever the answers were).
            if (exhaustedRewrites() !== budget) throw exhaustedRefusal('the origin function', origin as string);
            if (found === undefined) return verdict;
            if (typeof found === 'string') throw refusal(found);
            // Unknown: this request fails, and nothing is remembered.
            if ('unanswered' in found) throw unansweredRefusal('the origin function', origin as string, found);
            shown ??= [origin as string, found];
            throw lookAlikeRefusal('the origin function', origin as string, found);
          });
        });
      });
    },
  });
}
