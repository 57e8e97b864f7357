// Attacker's review, session 17 (helper-118), fixed by helper fix-idn-tld: with credentials, a drop-in origin function
// trusting an IDN brand under any top-level domain of its script, the host read in Unicode —
// `/^пример\.[а-яё]+$/u.test(domainToUnicode(new URL(o).hostname))`, or `/^例子\.\p{Script=Han}+$/u` — let
// пример.онлайн (https://xn--e1afmkfd.xn--80asehdb) and 例子.在线 read with credentials through all four drop-ins, and the
// brand's own request showed nothing: kind (f) of lookAlikes varied an IDN top-level domain into ASCII text only
// (`xn--p1ai` → `qq--q7qq`), kind (i) draws ASCII generic TLDs only, and (e) varies the registrable label, not the suffix.
// Fixed: (f) also replaces an IDN suffix label's Unicode form whole by text of the same script and length (confirmed by a
// second such text), written back in punycode. The defender's side: an exact list of the brand's IDN names stays accepted.
import { domainToUnicode } from 'node:url';
import { lookAlikes } from '@ampcors/core/legacy-origin-option';
import { parseOrigin } from '@ampcors/core/origin-header';
import { describe, expect, it } from 'vitest';
import { ADAPTERS, ascii, attackerReads, readsWithCredentials } from './look-alike-adapters.js';

const unicodeHost = (origin: string): string => {
  try {
    return domainToUnicode(new URL(origin).hostname);
  } catch {
    return '';
  }
};

const CASES = [
  // Brand under any Cyrillic TLD (пример.рф, пример.рус, пример.москва...): the attacker registers пример.онлайн.
  { pattern: /^пример\.[а-яё]+$/u, publisher: `https://${ascii('пример.рф')}`, evil: `https://${ascii('пример.онлайн')}` },
  // Brand under any Chinese TLD (例子.中国, 例子.公司...): the attacker registers 例子.在线.
  { pattern: /^例子\.\p{Script=Han}+$/u, publisher: `https://${ascii('例子.中国')}`, evil: `https://${ascii('例子.在线')}` },
];

describe.each(ADAPTERS)('$name: brand under any TLD of its script', (adapter) => {
  it.each(CASES)('$evil (publisher $publisher)', async ({ pattern, publisher, evil }) => {
    const allows = (o: string) => pattern.test(unicodeHost(o));
    expect([allows(evil), allows(publisher)]).toEqual([true, true]);
    for (const async of [false, true]) {
      // From the publisher's side first (the guard sees the loose function on the brand's own request), then the attacker's.
      const fromPublisher = await attackerReads(adapter, adapter.originFunction(allows, async), publisher);
      const fromEvil = await attackerReads(adapter, adapter.originFunction(allows, async), evil);
      expect({ publisherOrigin: readsWithCredentials(fromPublisher, publisher), evil: readsWithCredentials(fromEvil, evil) }).toEqual({
        publisherOrigin: false,
        evil: false,
      });
    }
  });
});

// The defender: an exact list of the brand's names under IDN top-level domains of one script.
const LISTS = [
  { names: ['пример.рф', 'пример.рус'], evil: 'пример.онлайн' },
  { names: ['例子.中国', '例子.公司'], evil: '例子.在线' },
];

describe.each(ADAPTERS)('$name: an exact list of IDN names stays accepted', (adapter) => {
  it.each(LISTS)('$names', async ({ names, evil }) => {
    const list = new Set(names);
    const allows = (o: string) => list.has(unicodeHost(o));
    for (const async of [false, true]) {
      for (const name of names) {
        const publisher = `https://${ascii(name)}`;
        expect(readsWithCredentials(await attackerReads(adapter, adapter.originFunction(allows, async), publisher), publisher)).toBe(true);
      }
      const from = `https://${ascii(evil)}`;
      expect(readsWithCredentials(await attackerReads(adapter, adapter.originFunction(allows, async), from), from)).toBe(false);
    }
  });
});

// IDN top-level domains of many scripts (right-to-left ones included): the look-alikes are hosts a browser sends, and one
// of them (with its confirmation) puts the brand under another top-level domain of the suffix's script and length.
const SCRIPT_TLDS = [
  { name: 'пример.рф', script: /^\p{Script=Cyrillic}+$/u },
  { name: '例子.中国', script: /^\p{Script=Han}+$/u },
  { name: 'مثال.مصر', script: /^\p{Script=Arabic}+$/u },
  { name: 'דוגמה.ישראל', script: /^\p{Script=Hebrew}+$/u },
  { name: 'ตัวอย่าง.ไทย', script: /^\p{Script=Thai}+$/u },
  { name: '예시.한국', script: /^\p{Script=Hangul}+$/u },
  { name: 'उदाहरण.भारत', script: /^\p{Script=Devanagari}+$/u },
  { name: 'உதாரணம்.இந்தியா', script: /^\p{Script=Tamil}+$/u },
  { name: 'παράδειγμα.ελ', script: /^\p{Script=Greek}+$/u },
  { name: 'օրինակ.հայ', script: /^\p{Script=Armenian}+$/u },
  { name: 'მაგალითი.გე', script: /^\p{Script=Georgian}+$/u },
  { name: 'れい.みんな', script: /^\p{Script=Hiragana}+$/u },
  { name: 'れい.コム', script: /^\p{Script=Katakana}+$/u },
  { name: 'example.рус', script: /^\p{Script=Cyrillic}+$/u },
  { name: 'example.ভারত', script: /^\p{Script=Bengali}+$/u },
  { name: 'example.ਭਾਰਤ', script: /^\p{Script=Gurmukhi}+$/u },
  { name: 'example.ભારત', script: /^\p{Script=Gujarati}+$/u },
  { name: 'example.ଭାରତ', script: /^\p{Script=Oriya}+$/u },
  { name: 'example.భారత్', script: /^\p{Script=Telugu}+$/u },
  { name: 'example.ಭಾರತ', script: /^\p{Script=Kannada}+$/u },
  { name: 'example.ഭാരതം', script: /^\p{Script=Malayalam}+$/u },
  { name: 'example.ලංකා', script: /^\p{Script=Sinhala}+$/u },
  { name: 'example.ایران', script: /^\p{Script=Arabic}+$/u },
  { name: 'example.香港', script: /^\p{Script=Han}+$/u },
  { name: 'example.xn--p1ai', script: /^\p{Script=Cyrillic}+$/u },
];

describe('kind (f) for an IDN top-level domain: text of its script', () => {
  it.each(SCRIPT_TLDS)('$name', ({ name, script }) => {
    const publisher = `https://${ascii(name)}`;
    const [label, tld] = unicodeHost(publisher).split('.') as [string, string];
    const found = lookAlikes(parseOrigin(publisher) as never);
    const sameScript = (origin: string | undefined) => {
      const [otherLabel, otherTld, more] = unicodeHost(origin ?? '').split('.');
      return more === undefined && otherLabel === label && otherTld !== tld && script.test(otherTld ?? '') && [...(otherTld ?? '')].length === [...tld].length;
    };
    const varied = found.filter((one) => sameScript(one.origin) && sameScript(one.confirm) && one.origin !== one.confirm);
    expect(varied).toHaveLength(1);
    // A host a browser sends, written as it is sent, and a name with a subdomain too (the Bidi rule holds).
    for (const origin of [varied[0]?.origin, varied[0]?.confirm] as string[]) {
      expect(new URL(origin).origin).toBe(origin);
      expect(new URL(`https://x.${new URL(origin).hostname}`).hostname).toBe(`x.${new URL(origin).hostname}`);
    }
  });
});
