/**
 * Assertions on the errors core throws: the `AmpCorsError` itself, its
 * stable `code`, and its message (messages are part of the API: "clear
 * errors"), shared by the attacker-side suites beside it.
 */
import { AmpCorsError } from '@ampcors/core';
import { expect } from 'vitest';

/** The `AmpCorsError` that `run` throws; fails the test when it throws nothing or anything else. */
export function errorOf(run: () => unknown): AmpCorsError {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(AmpCorsError);
    return error as AmpCorsError;
  }
  throw new Error('expected an AmpCorsError');
}

/** Asserts that `run` throws an `AmpCorsError` with this code and this message (exact, or matching). */
export function expectError(run: () => unknown, code: string, message: string | RegExp): void {
  const error = errorOf(run);
  expect(error.code).toBe(code);
  if (typeof message === 'string') expect(error.message).toBe(message);
  else expect(error.message).toMatch(message);
}
