// IP address literals for SPEC §5 host steps 3 and 4: IPv4 in every legal
// inet_aton-style form, and IPv6 (RFC 4291 §2.2 text, RFC 5952 output).
// Parsers return null for text that is not an address; they never throw.

/** One IPv4 component: hex with `0x`, octal with a leading `0`, or decimal. */
const IPV4_COMPONENT = /^(?:0x([0-9a-f]*)|(0[0-7]*)|([1-9][0-9]*))$/i;
/** One IPv6 group: one to four hex digits. */
const IPV6_GROUP = /^[0-9a-f]{1,4}$/i;
/** An IPv4 tail inside IPv6 text: strict dotted decimal, no leading zeros. */
const DOTTED_DECIMAL = /^(?:(?:25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])\.){3}(?:25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])$/;

/** The NAT64 well-known prefix 64:ff9b::/96 (RFC 6052 §2.1), first two groups. */
const NAT64_HIGH = [0x64, 0xff9b] as const;

function componentValue(text: string): number | null {
  const match = IPV4_COMPONENT.exec(text);
  if (match === null) return null;
  const [, hex, octal, decimal] = match;
  if (hex !== undefined) return hex === '' ? 0 : parseInt(hex, 16);
  if (octal !== undefined) return parseInt(octal, 8);
  return parseInt(decimal as string, 10);
}

/**
 * Parses an IPv4 address in any legal form (SPEC §5 host step 3): one to four
 * dot-separated components, each decimal, octal (leading `0`) or hex (`0x`);
 * every component but the last is one byte, and the last fills the remaining
 * bytes (`12.0x12.01234` is 12.18.2.156, `3279880203` is 195.127.0.11).
 *
 * A component out of range, a fifth component, an empty component or a digit
 * that is not valid in its base makes the text "not an IPv4 address" (null),
 * as in Chromium; values are never truncated.
 *
 * @param text - a host without leading, trailing or repeated dots
 * @returns the address as an unsigned 32-bit number, or null
 */
export function parseIpv4(text: string): number | null {
  const parts = text.split('.');
  if (parts.length > 4) return null;
  let address = 0;
  for (let i = 0; i < parts.length; i += 1) {
    const value = componentValue(parts[i] as string);
    if (value === null) return null;
    const isLast = i === parts.length - 1;
    // The last component holds the 5 - n low bytes; the others one byte each.
    const limit = isLast ? 2 ** (8 * (5 - parts.length)) : 256;
    if (value >= limit) return null;
    address += isLast ? value : value * 2 ** (8 * (3 - i));
  }
  return address;
}

/**
 * Dotted-decimal text of an IPv4 address.
 *
 * @param address - an unsigned 32-bit number, as {@link parseIpv4} returns
 * @example formatIpv4(3279880203) // '195.127.0.11'
 */
export function formatIpv4(address: number): string {
  return [address >>> 24, (address >>> 16) & 0xff, (address >>> 8) & 0xff, address & 0xff].join('.');
}

function parseGroups(text: string, ipv4Tail: boolean): number[] | null {
  if (text === '') return [];
  const pieces = text.split(':');
  const groups: number[] = [];
  for (let i = 0; i < pieces.length; i += 1) {
    const piece = pieces[i] as string;
    if (ipv4Tail && i === pieces.length - 1 && DOTTED_DECIMAL.test(piece)) {
      const [a, b, c, d] = piece.split('.').map(Number) as [number, number, number, number];
      groups.push((a << 8) | b, (c << 8) | d);
    } else if (IPV6_GROUP.test(piece)) {
      groups.push(parseInt(piece, 16));
    } else {
      return null;
    }
  }
  return groups;
}

/**
 * Parses IPv6 address text without brackets (RFC 4291 §2.2): eight groups of
 * one to four hex digits, at most one `::` standing for one or more zero
 * groups, and optionally a dotted-decimal IPv4 address as the last 32 bits.
 * Zone identifiers (`%eth0`) are not accepted.
 *
 * @param text - the text between the brackets of a URL host
 * @returns the eight 16-bit groups, or null when `text` is not an IPv6 address
 */
export function parseIpv6(text: string): number[] | null {
  const halves = text.split('::');
  if (halves.length > 2) return null;
  const compressed = halves.length === 2;
  const head = parseGroups(halves[0] as string, !compressed);
  const tail = compressed ? parseGroups(halves[1] as string, true) : [];
  if (head === null || tail === null) return null;
  const given = head.length + tail.length;
  if (compressed ? given > 7 : given !== 8) return null;
  return [...head, ...new Array<number>(8 - given).fill(0), ...tail];
}

/**
 * RFC 5952 §4 text of an IPv6 address, without brackets: lowercase hex
 * without leading zeros, and the longest run of two or more zero groups (the
 * first, on a tie) replaced by `::`.
 *
 * @param groups - eight 16-bit groups, as {@link parseIpv6} returns
 * @example formatIpv6([0x2001, 0xdb8, 0, 0, 0, 0, 0, 1]) // '2001:db8::1'
 */
export function formatIpv6(groups: readonly number[]): string {
  let bestStart = -1;
  let bestLength = 1;
  for (let start = 0; start < groups.length;) {
    let end = start;
    while (end < groups.length && groups[end] === 0) end += 1;
    if (end - start > bestLength) {
      bestStart = start;
      bestLength = end - start;
    }
    start = end === start ? start + 1 : end;
  }
  const hex = (from: number, to: number) =>
    groups
      .slice(from, to)
      .map((group) => group.toString(16))
      .join(':');
  if (bestStart < 0) return hex(0, groups.length);
  return `${hex(0, bestStart)}::${hex(bestStart + bestLength, groups.length)}`;
}

/**
 * The IPv4 address carried by an IPv4-mapped (`::ffff:0:0/96`, RFC 4291
 * §2.5.5.2) or NAT64 well-known-prefix (`64:ff9b::/96`, RFC 6052) IPv6
 * address, which SPEC §5 host step 4 turns into plain IPv4.
 *
 * @param groups - eight 16-bit groups
 * @returns the embedded address as an unsigned 32-bit number, or null
 */
export function embeddedIpv4(groups: readonly number[]): number | null {
  const zeroFrom = (from: number, to: number) => groups.slice(from, to).every((group) => group === 0);
  const mapped = zeroFrom(0, 5) && groups[5] === 0xffff;
  const nat64 = groups[0] === NAT64_HIGH[0] && groups[1] === NAT64_HIGH[1] && zeroFrom(2, 6);
  if (!mapped && !nat64) return null;
  return (((groups[6] as number) << 16) | (groups[7] as number)) >>> 0;
}
