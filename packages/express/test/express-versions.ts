/**
 * What the Express tests share: both supported Express majors (5 as
 * `express`, 4 as the `express4` alias), for `describe.each`, and the two
 * origins they send — the cache origin of the trusted `example.com` and an
 * attacker's.
 */
import { createRequire } from 'node:module';
import express5 from 'express';

const require = createRequire(import.meta.url);
const express4 = require('express4') as typeof express5;

/** `[name, express]` of every supported Express major, for `describe.each`. */
export const EXPRESS_VERSIONS: ReadonlyArray<readonly [string, typeof express5]> = [
  ['express 5', express5],
  ['express 4', express4],
];

/** The Google AMP cache origin of `example.com`, the publisher the tests trust. */
export const CACHE = 'https://example-com.cdn.ampproject.org';

/** An origin nobody trusts. */
export const EVIL = 'https://evil.example';
