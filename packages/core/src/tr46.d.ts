// Local declaration for tr46 v6 (UTS #46, the mapping of the WHATWG URL host
// parser); the package ships no types.
declare module 'tr46' {
  /** UTS #46 processing options (all default to false). */
  export interface Tr46Options {
    readonly checkBidi?: boolean;
    readonly checkHyphens?: boolean;
    readonly checkJoiners?: boolean;
    readonly ignoreInvalidPunycode?: boolean;
    readonly transitionalProcessing?: boolean;
    readonly useSTD3ASCIIRules?: boolean;
    readonly verifyDNSLength?: boolean;
  }
  /** UTS #46 ToASCII: the A-label form, or `null` when the input is refused. */
  export function toASCII(domainName: string, options?: Tr46Options): string | null;
  /** UTS #46 ToUnicode: the mapped Unicode form, and whether an error was found. */
  export function toUnicode(domainName: string, options?: Tr46Options): { domain: string; error: boolean };
}
