// Local declaration for the userland punycode package's ES module build. The
// package ships no types for this entry; `import 'punycode'` would load Node's
// deprecated built-in instead, and `'punycode/'` fails under Node ESM.
declare module 'punycode/punycode.es6.js' {
  /** Converts a Punycode string of ASCII symbols to a string of Unicode symbols (RFC 3492). */
  export function decode(input: string): string;
  /** Converts a string of Unicode symbols to a Punycode string of ASCII symbols (RFC 3492). */
  export function encode(input: string): string;
  /** Converts a domain name (labels starting `xn--`) to Unicode. */
  export function toUnicode(input: string): string;
  /** Converts a Unicode domain name to ASCII, punycode-encoding non-ASCII labels with `xn--`. */
  export function toASCII(input: string): string;
}
