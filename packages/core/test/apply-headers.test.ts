// applyHeadersAtomically: every header of a plan, or none (issue 14 item 8).
import { IncomingMessage, ServerResponse } from 'node:http';
import { describe, expect, it } from 'vitest';
import { applyHeadersAtomically, type HeaderTarget, type StoredHeaderValue } from '../src/adapter.js';

/** A header store that refuses, like Node's, a value with a character outside Latin-1 or a control character. */
function store(initial: Record<string, StoredHeaderValue> = {}): HeaderTarget & { headers: Map<string, StoredHeaderValue> } {
  const headers = new Map<string, StoredHeaderValue>(Object.entries(initial).map(([k, v]) => [k.toLowerCase(), v]));
  return {
    headers,
    getHeader: (name) => headers.get(name.toLowerCase()),
    setHeader: (name, value) => {
      if (typeof value === 'string' && /[^\t\x20-\x7e\x80-\xff]/.test(value)) throw new TypeError(`Invalid character in header content ["${name}"]`);
      headers.set(name.toLowerCase(), value);
    },
    removeHeader: (name) => headers.delete(name.toLowerCase()),
  };
}

describe('applyHeadersAtomically', () => {
  it('sets every header and appends Vary to what is there', () => {
    const target = store({ Vary: 'Accept-Encoding' });
    applyHeadersAtomically(
      target,
      [
        ['Access-Control-Allow-Origin', 'https://example-com.cdn.ampproject.org'],
        ['Access-Control-Allow-Credentials', 'true'],
      ],
      ['Origin'],
    );
    expect(Object.fromEntries(target.headers)).toEqual({
      vary: 'Accept-Encoding, Origin',
      'access-control-allow-origin': 'https://example-com.cdn.ampproject.org',
      'access-control-allow-credentials': 'true',
    });
  });

  it('leaves no half-applied CORS header when the runtime refuses a value, and puts back what was there', () => {
    const target = store({ 'Access-Control-Allow-Credentials': 'false', Vary: 'Accept' });
    const attempt = () =>
      applyHeadersAtomically(
        target,
        [
          ['Access-Control-Allow-Origin', 'https://evil.example'],
          ['Access-Control-Allow-Credentials', 'true'],
          ['AMP-Email-Allow-Sender', '\u212Aate@example.com'],
        ],
        ['Origin'],
      );
    expect(attempt).toThrow(TypeError);
    expect(Object.fromEntries(target.headers)).toEqual({ 'access-control-allow-credentials': 'false', vary: 'Accept' });
  });

  it('rethrows the runtime error even when putting a header back fails too (headers already sent)', () => {
    const target = store();
    const failing: HeaderTarget = {
      getHeader: target.getHeader,
      setHeader: (name, value) => {
        if (name.toLowerCase() === 'x-bad') throw new TypeError('refused');
        return target.setHeader(name, value);
      },
      removeHeader: () => {
        throw new Error('headers already sent');
      },
    };
    expect(() =>
      applyHeadersAtomically(
        failing,
        [
          ['Access-Control-Allow-Origin', 'https://a.example'],
          ['X-Bad', 'x'],
        ],
        [],
      ),
    ).toThrow('refused');
  });

  it("on Node's ServerResponse: Vary appended, earlier values put back on refusal", () => {
    const res = new ServerResponse(new IncomingMessage(null as never));
    res.setHeader('Vary', 'Accept-Encoding');
    res.setHeader('Access-Control-Allow-Credentials', 'false');
    applyHeadersAtomically(res, [['Access-Control-Allow-Origin', 'https://a.example']], ['Origin']);
    expect(res.getHeader('vary')).toBe('Accept-Encoding, Origin');
    expect(() =>
      applyHeadersAtomically(
        res,
        [
          ['Access-Control-Allow-Credentials', 'true'],
          ['X-Bad', 'line\r\nbreak'],
        ],
        ['Origin'],
      ),
    ).toThrow();
    expect(res.getHeader('access-control-allow-credentials')).toBe('false');
    expect(res.hasHeader('x-bad')).toBe(false);
  });
});
