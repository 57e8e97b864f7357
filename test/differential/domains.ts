/**
 * Domain generators of the differential tests (issue 13): ASCII names,
 * hyphen patterns (`--` in positions 3–4 of the first or a later label,
 * `xn-`, `xn--`, `0-`, `-0` shapes, a first label `xn-…` before an IDN), joined lengths around 63 before and after
 * the `0-…-0` wrap, IDNs in many scripts including right-to-left and mixed
 * ones, emoji with variation selectors, the transitional characters (ß, ς,
 * ZWJ, ZWNJ), compatibility characters and `xn--` input. Everything is drawn
 * with fast-check from a fixed seed, so a run is repeatable.
 */
import fc from 'fast-check';
import { tr46 } from './amppackager-oracle.js';

/** The seed of every generated corpus of the differential tests. */
export const DIFFERENTIAL_SEED = 13_2026;

const chars = (s: string): string[] => Array.from(s);

/**
 * Letters of many scripts, all assigned in Unicode 13 or earlier (the tables
 * of the Go x/net/idna amppackager builds with), so the oracle and Go agree.
 */
export const SCRIPTS: Readonly<Record<string, readonly string[]>> = {
  latin: chars('abcdefghijklmnopqrstuvwxyzéèüöäñçåøœłžščğışț'),
  latinUpper: chars('ABCXYZÜÖÄÉŞİÅ'),
  greek: chars('αβγδεζηθικλμνξοπρστυφχψωάέήίόύώϊϋΐΰΣΩ'),
  cyrillic: chars('абвгдежзийклмнопрстуфхцчшщъыьэюяёђѓєѕіїјљњћќўДЖЯ'),
  armenian: chars('աբգդեզէըթժիլխծկհձղճմյնշոչպջռսվտրցւփքօֆ'),
  georgian: chars('აბგდევზთიკლმნოპჟრსტუფქღყშჩცძწჭხჯჰ'),
  hebrew: chars('אבגדהוזחטיכלמנסעפצקרשתךםןףץ'),
  hebrewMarks: chars('\u05b4\u05b7\u05bc'),
  arabic: chars('ابتثجحخدذرزسشصضطظعغفقكلمنهويةى'),
  arabicDigits: chars('٠١٢٣٤٥٦٧٨٩'),
  persianDigits: chars('۰۱۲۳۴۵۶۷۸۹'),
  arabicMarks: chars('\u064e\u064f\u0650'),
  thaana: chars('ހށނރބޅކއވމ'),
  devanagari: chars('कखगघचछजझटठडढणतथदधनपफबभमयरलवशसह'),
  devanagariMarks: chars('\u093e\u093f\u0940\u0941\u094d'),
  bengali: chars('অআইঈউকখগঘচছজঝটঠডঢণতথদধনপফবভম'),
  tamil: chars('அஆஇஈஉஊஎஏகஙசஞடணதநபமயரலவழளறன'),
  thai: chars('กขคงจฉชซญดตถทธนบปผพฟภมยรลวศสหอฮ'),
  ethiopic: chars('ሀለሐመሠረሰሸቀበተቸኀነኘአከ'),
  mongolian: chars('ᠠᠡᠢᠣᠤᠨᠪᠫᠮᠯᠰᠱ'),
  cjk: chars('中文字日本語漢字網站公司北京上海東京'),
  kana: chars('あいうえおかきくけこアイウエオカキクケコ'),
  hangul: chars('한국어도메인서울부산'),
  digits: chars('0123456789'),
};
const SCRIPT_NAMES = Object.keys(SCRIPTS).filter((name) => !/Marks$|Digits$|^digits$|Upper$/.test(name));

/** Emoji (Unicode ≤ 12), some with variation selectors, skin tones or ZWJ sequences. */
export const EMOJI: readonly string[] = [
  '❤',
  '❤\ufe0f',
  '❤\ufe0e',
  '⚡',
  '😊',
  '☕',
  '✈\ufe0f',
  '👍',
  '👍🏽',
  '👨\u200d👩\u200d👧',
  '🏳\ufe0f\u200d🌈',
  '1\ufe0f\u20e3',
  '☺\ufe0e',
  '🦄',
  '🍕',
];

/**
 * Characters on which mappings differ: the transitional class (ß, ẞ, ς, ZWJ,
 * ZWNJ), compatibility and full-width forms, dots IDNA maps to `.`, ignored
 * and disallowed characters, combining marks, STD3-sensitive punctuation.
 */
export const SPECIAL: readonly string[] = [
  'ß',
  'ẞ',
  'ς',
  '\u200d',
  '\u200c',
  '\u0301',
  '\u0308',
  'Ϋ́',
  'ǅ',
  'ﬁ',
  'Ａ',
  '１',
  '\u3002',
  '\uff0e',
  '\u00ad',
  '\u2260',
  '_',
  'ℌ',
  '①',
  '⑴',
  '\u0640',
  'İ',
  'ı',
  'Σ',
  '\u200b',
  '\ufeff',
];

/** Words that use ZWNJ/ZWJ the way CONTEXTJ allows (Persian, Devanagari), and ways it does not. */
export const JOINER_WORDS: readonly string[] = [
  'می\u200cخواهم',
  'क्\u200dष',
  'क्\u200cष',
  'ب\u200cا',
  'a\u200cb',
  'ᠮ\u200ca',
  'ᠮ\u200cᠠ',
  'ی\u200c',
  '\u200dab',
  'ab\u200d',
  'ल्\u200d',
];

/** Top-level parts: letters-only, A-label and Unicode TLDs, two-label public suffixes, digits. */
export const TLDS: readonly string[] = [
  'com',
  'de',
  'org',
  'net',
  'ch',
  'jp',
  'fun',
  'co.uk',
  'org.fun',
  'de.pub',
  'xn--p1ai',
  'рф',
  'קום',
  'موقع',
  'xn--wgbh1c',
  '中国',
  'gr',
  'ελ',
  'a1',
  '0',
  'example',
];

const LDH = chars('abcdefghijklmnopqrstuvwxyz0123456789');

/** ASCII letters and digits, `minLength`–`maxLength` long. */
function word(minLength: number, maxLength: number): fc.Arbitrary<string> {
  return fc.array(fc.constantFrom(...LDH), { minLength, maxLength }).map((a) => a.join(''));
}

/** An LDH-ish label with many hyphens, sometimes uppercase. */
const asciiLabel = fc
  .array(
    fc.oneof(
      { weight: 6, arbitrary: fc.constantFrom(...LDH) },
      { weight: 1, arbitrary: fc.constant('-') },
      { weight: 1, arbitrary: fc.constantFrom(...SCRIPTS.latinUpper!.slice(0, 3)) },
    ),
    {
      minLength: 1,
      maxLength: 16,
    },
  )
  .map((a) => a.join(''));

/** Labels with hyphen shapes that the prefix algorithms treat specially. */
const hyphenLabel = fc.oneof(
  fc.tuple(word(2, 2), fc.constantFrom('--', '---', '-', '----'), word(1, 8)).map(([a, h, b]) => a + h + b),
  fc.tuple(word(1, 1), fc.constantFrom('-', '--', '---'), word(1, 8)).map(([a, h, b]) => a + h + b),
  fc.tuple(fc.constantFrom('xn-', 'xn--', 'xn---', '0-', 'x-', 'xn'), word(1, 10)).map(([a, b]) => a + b),
  fc.tuple(word(1, 10), fc.constantFrom('-0', '-', '--0')).map(([a, b]) => a + b),
  fc.tuple(word(1, 6), fc.constantFrom('-0-', '-xn--', '--'), word(1, 6)).map(([a, h, b]) => a + h + b),
);

/** A label of one script (letters, sometimes that script's marks and digits, sometimes a hyphen). */
const scriptLabel = fc.constantFrom(...SCRIPT_NAMES).chain((name) => {
  const letters = SCRIPTS[name]!;
  const extras = [
    ...(name === 'hebrew' ? SCRIPTS.hebrewMarks! : []),
    ...(name === 'arabic' ? [...SCRIPTS.arabicMarks!, ...SCRIPTS.arabicDigits!, ...SCRIPTS.persianDigits!] : []),
    ...(name === 'devanagari' ? SCRIPTS.devanagariMarks! : []),
    ...SCRIPTS.digits!.slice(0, 3),
    '-',
  ];
  return fc
    .array(fc.oneof({ weight: 8, arbitrary: fc.constantFrom(...letters) }, { weight: 1, arbitrary: fc.constantFrom(...extras) }), {
      minLength: 1,
      maxLength: 12,
    })
    .map((a) => a.join(''));
});

/** A label mixing characters of two or three scripts, ASCII, emoji and special characters. */
const mixedLabel = fc
  .array(
    fc.oneof(
      fc.constantFrom(...SCRIPT_NAMES).chain((name) => fc.constantFrom(...SCRIPTS[name]!)),
      fc.constantFrom(...LDH),
      fc.constantFrom(...EMOJI),
      fc.constantFrom(...SPECIAL),
      fc.constant('-'),
    ),
    { minLength: 1, maxLength: 8 },
  )
  .map((a) => a.join(''));

/** An emoji label, sometimes with ASCII around it. */
const emojiLabel = fc
  .tuple(fc.constantFrom('', 'a', 'i', 'x-'), fc.array(fc.constantFrom(...EMOJI), { minLength: 1, maxLength: 3 }), fc.constantFrom('', 'b', '-z'))
  .map(([a, e, b]) => a + e.join('') + b);

/** A label of a script or Latin with one special (transitional, compatibility, joiner…) character inserted. */
const specialLabel = fc.tuple(fc.oneof(word(1, 8), scriptLabel), fc.constantFrom(...SPECIAL, ...JOINER_WORDS), fc.nat(20)).map(([base, special, at]) => {
  const points = Array.from(base);
  const i = at % (points.length + 1);
  return [...points.slice(0, i), special, ...points.slice(i)].join('');
});

/** A Unicode label written as its A-label (`xn--…`, computed without checks), or a bogus `xn--` label. */
const aLabel = fc.oneof(
  { weight: 4, arbitrary: fc.oneof(scriptLabel, specialLabel, emojiLabel).map((label) => tr46.toASCII(label) ?? label) },
  { weight: 1, arbitrary: word(1, 10).map((w) => `xn--${w}`) },
);

/** Any label. */
export const label: fc.Arbitrary<string> = fc.oneof(
  { weight: 5, arbitrary: asciiLabel },
  { weight: 4, arbitrary: hyphenLabel },
  { weight: 4, arbitrary: scriptLabel },
  { weight: 2, arbitrary: mixedLabel },
  { weight: 1, arbitrary: emojiLabel },
  { weight: 3, arbitrary: specialLabel },
  { weight: 2, arbitrary: aLabel },
);

/** A domain of 1–4 labels and a TLD. */
const plainDomain = fc
  .tuple(fc.array(label, { minLength: 1, maxLength: 4 }), fc.oneof({ weight: 4, arbitrary: fc.constantFrom(...TLDS) }, { weight: 1, arbitrary: label }))
  .map(([labels, tld]) => [...labels, tld].join('.'));

/** Length of a domain spelled as one label (`-` doubled, `.` made `-`), in UTF-16 units. */
function joinedLength(domain: string): number {
  return domain.length + (domain.match(/-/g)?.length ?? 0);
}

/**
 * Domains whose label spelling is 55–70 characters long (so that both the
 * 63-octet limit and the 4 characters of the `0-…-0` wrap are crossed), with
 * and without `--` in positions 3–4, ASCII or with one IDN label.
 */
const nearLimitDomain = fc
  .record({
    head: fc.oneof(word(1, 6), hyphenLabel, scriptLabel, specialLabel),
    middle: fc.array(fc.oneof(word(1, 20), hyphenLabel), { minLength: 0, maxLength: 3 }),
    tld: fc.constantFrom(...TLDS),
    target: fc.integer({ min: 51, max: 70 }),
  })
  .map(({ head, middle, tld, target }) => {
    const base = [head, ...middle, tld].join('.');
    const missing = Math.max(1, target - joinedLength(base) - 1);
    return [head, ...middle, 'p'.repeat(Math.min(missing, 63)), tld].join('.');
  });

/**
 * A first label `xn-…` before an IDN label: amppackager's single label then
 * starts `xn--` with non-ASCII characters, which x/net/idna decodes anyway.
 */
const xnFirstDomain = fc
  .tuple(word(1, 8), fc.oneof(scriptLabel, specialLabel, emojiLabel), fc.constantFrom(...TLDS))
  .map(([w, idn, tld]) => `xn-${w}.${idn}.${tld}`);

/** A publisher domain as someone may write it: mostly valid, sometimes not; any case; any script. */
export const domain: fc.Arbitrary<string> = fc.oneof(
  { weight: 6, arbitrary: plainDomain },
  { weight: 2, arbitrary: nearLimitDomain },
  { weight: 1, arbitrary: xnFirstDomain },
  { weight: 1, arbitrary: label },
);

/** Input noise for the canonicalization property: dots, spaces, percent escapes, IP-like names, ports. */
export const noisyDomain: fc.Arbitrary<string> = fc.oneof(
  { weight: 6, arbitrary: domain },
  {
    weight: 2,
    arbitrary: fc.tuple(domain, fc.constantFrom('.', '..', ' ', '%2e', '%41', ':80', '/', '\t', '@', '*', '[', '\u3002', '\uff0e')).map(([d, x]) => d + x),
  },
  { weight: 1, arbitrary: fc.tuple(fc.constantFrom('.', ' ', '-', 'xn--.', '%', '\u00ad'), domain).map(([x, d]) => x + d) },
  {
    weight: 1,
    arbitrary: fc.constantFrom(
      '1.2.3.4',
      '0x7f.1',
      '1.0x7f',
      'a.0x7f',
      '1.2.3.09',
      '256.1',
      'a.1',
      'a.1e',
      '[::1]',
      '127.1',
      'a.b.08',
      'ff.0xff',
      'a..b',
      '.',
      '',
    ),
  },
);

/** `count` domains from `arbitrary`, drawn from a fixed seed. */
export function sampleDomains(count: number, arbitrary: fc.Arbitrary<string> = domain, seed: number = DIFFERENTIAL_SEED): string[] {
  return fc.sample(arbitrary, { seed, numRuns: count });
}
