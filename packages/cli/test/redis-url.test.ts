/**
 * Attacker's review, session 15 (helper-70): a `--url` that passes the CLI's
 * own check (a redis:// URL) but that @ampcors/redis refuses (a path that is
 * no database number, no host) threw its AmpCorsError out of `run()`: the
 * executable printed "internal error" with a stack and exited 70, and
 * `--json` printed no error line. It is a wrong invocation: exit 2, a
 * `usage` error, the URL's control characters escaped.
 */
import { tmpdir } from 'node:os';
import { describe, expect, it } from 'vitest';
import { EXIT } from '@ampcors/cli';
import { cliIn } from './harness.js';

const cli = cliIn(tmpdir());
const REFUSED = [
  'redis://127.0.0.1:1/x',
  'redis://127.0.0.1:1/0/1',
  'redis:///0',
  'rediss://127.0.0.1:1/%1b[2J',
  'redis://127.0.0.1:1/\u001b[2J',
  // Malformed percent-escapes in the user name or password (attacker's review, session 17: a URIError escaped, exit 70).
  'redis://:%zz@127.0.0.1:1',
  'redis://user%@127.0.0.1:1',
  'rediss://u:%E0%A4%A@127.0.0.1:1',
  'redis://:%ff@127.0.0.1:1/0',
];

describe('ampcors redis: a --url @ampcors/redis refuses is a usage error', () => {
  for (const url of REFUSED) {
    it(`${JSON.stringify(url)}: exit 2, on stderr`, async () => {
      const { code, stderr, stdout } = await cli(['redis', 'count', '--url', url, '--timeout', '200']);
      expect(code).toBe(EXIT.usage);
      expect(stdout.text).toBe('');
      expect(stderr.text).toMatch(/^ampcors: --url: /);
      expect(stderr.text).not.toContain('internal error');
      expect(stderr.text).not.toContain('\u001b');
    });
    it(`${JSON.stringify(url)}: exit 2, one JSON error line with --json`, async () => {
      const { code, stdout } = await cli(['redis', 'count', '--url', url, '--timeout', '200', '--json']);
      expect(code).toBe(EXIT.usage);
      const lines = stdout.text.trim().split('\n');
      expect(lines).toHaveLength(1);
      expect((JSON.parse(lines[0] as string) as { error: { code: string } }).error.code).toBe('usage');
    });
  }
});
