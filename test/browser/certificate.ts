/**
 * The TLS certificate of the browser suite's origins, made at test time:
 * one self-signed certificate whose subject alternative names cover every
 * host the pages and the API are served on (wildcards included).
 */
import { generate } from 'selfsigned';

/** PEM key and certificate for `node:https`. */
export interface TestCertificate {
  readonly key: string;
  readonly cert: string;
}

/**
 * Makes a one-day self-signed certificate for `names` (DNS names, `*.`
 * wildcards allowed), valid from an hour ago to allow for clock skew.
 */
export async function makeCertificate(names: readonly string[]): Promise<TestCertificate> {
  if (names.length === 0) throw new Error('makeCertificate needs at least one DNS name');
  const now = Date.now();
  const pems = await generate([{ name: 'commonName', value: names[0] }], {
    keyType: 'ec',
    curve: 'P-256',
    notBeforeDate: new Date(now - 3_600_000),
    notAfterDate: new Date(now + 86_400_000),
    extensions: [
      { name: 'basicConstraints', cA: false },
      { name: 'keyUsage', digitalSignature: true, critical: true },
      { name: 'extKeyUsage', serverAuth: true },
      { name: 'subjectAltName', altNames: names.map((value) => ({ type: 2 as const, value })) },
    ],
  });
  return { key: pems.private, cert: pems.cert };
}
