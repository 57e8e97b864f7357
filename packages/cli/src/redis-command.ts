/**
 * `ampcors redis …`: changes and questions to the shared publisher registry
 * of `@ampcors/redis` (add, remove, load, count, check). Domain lists are
 * validated in full before anything is written; an unreachable Redis is one
 * clear line and exit code 5.
 */
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { resolve } from 'node:path';
import { CACHES, canonicalDomain, createAsyncVerifier, isAmpCorsError } from '@ampcors/core';
import { publisherRuleCheck } from '@ampcors/core/algorithms';
import type { RedisRegistry } from '@ampcors/redis';
import {
  CliError,
  type Command,
  type CommandContext,
  EXIT,
  forEachInput,
  malformedOrigin,
  stringOption,
  UsageError,
  verdictJson,
  verdictText,
} from './command-kit.js';
import { FileError, type InputLine, readLines } from './input-lines.js';
import { type InputStream, writeJson, writeLine } from './output.js';

/** The Redis URL used without `--url`. */
export const DEFAULT_REDIS_URL = 'redis://127.0.0.1:6379';
/** The key prefix used without `--key-prefix` (the registry's own default). */
export const DEFAULT_KEY_PREFIX = 'ampcors:';
/** How long (ms) to wait for Redis without `--timeout`. */
export const DEFAULT_REDIS_TIMEOUT_MS = 2000;
/** At most this many invalid domains are listed; the rest are counted. */
const MAX_LISTED_PROBLEMS = 20;

const SUBCOMMANDS = ['add', 'remove', 'load', 'count', 'check'] as const;
type Subcommand = (typeof SUBCOMMANDS)[number];

/** Redis could not be reached, or stopped answering: exit 5. */
class RedisUnavailableError extends CliError {
  constructor(url: string, cause: unknown) {
    const why = cause instanceof Error ? cause.message : String(cause);
    super(EXIT.unavailable, 'redis-unavailable', `Redis at ${url} is unavailable: ${why} (is redis-server running there? see --url)`);
    this.name = 'RedisUnavailableError';
  }
}

/** The package the `redis` command loads on demand (an optional peer dependency of `@ampcors/cli`). */
export const REDIS_PACKAGE = '@ampcors/redis';

/** True when `error` says that `specifier` itself (not something it imports) could not be found. */
function isMissing(error: unknown, specifier: string): boolean {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  return (code === 'ERR_MODULE_NOT_FOUND' || code === 'MODULE_NOT_FOUND') && error instanceof Error && error.message.includes(`'${specifier}'`);
}

/**
 * Loads `@ampcors/redis` when a `redis` subcommand runs — never before, so
 * the other commands work without it (and without a Redis client library).
 *
 * @throws CliError exit 6 when it is not installed, with the command to install it.
 */
async function loadRedisPackage(): Promise<typeof import('@ampcors/redis')> {
  try {
    return await import('@ampcors/redis');
  } catch (error) {
    if (!isMissing(error, REDIS_PACKAGE)) throw error;
    throw new CliError(
      EXIT.missingPackage,
      'missing-package',
      `ampcors redis needs the optional package ${REDIS_PACKAGE}, which is not installed: run \`npm install ${REDIS_PACKAGE}\` (next to @ampcors/cli; globally: npm install -g ${REDIS_PACKAGE})`,
    );
  }
}

interface RedisSettings {
  readonly url: string;
  /** The URL without credentials, for messages. */
  readonly shownUrl: string;
  readonly keyPrefix: string;
  readonly timeoutMs: number;
}

function settingsOf(context: CommandContext): RedisSettings {
  const url = stringOption(context, 'url') ?? DEFAULT_REDIS_URL;
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new UsageError(`--url must be a redis:// or rediss:// URL, not ${JSON.stringify(url.slice(0, 80))}`);
  }
  if (parsed.protocol !== 'redis:' && parsed.protocol !== 'rediss:')
    throw new UsageError(`--url must be a redis:// or rediss:// URL, not ${parsed.protocol}//…`);
  if (parsed.username !== '' || parsed.password !== '') {
    parsed.username = parsed.username === '' ? '' : '***';
    parsed.password = parsed.password === '' ? '' : '***';
  }
  const keyPrefix = stringOption(context, 'key-prefix') ?? DEFAULT_KEY_PREFIX;
  const timeoutText = stringOption(context, 'timeout');
  if (timeoutText !== undefined && !/^[1-9][0-9]{0,6}$/.test(timeoutText)) throw new UsageError('--timeout must be a positive number of milliseconds');
  return { url, shownUrl: parsed.href, keyPrefix, timeoutMs: timeoutText === undefined ? DEFAULT_REDIS_TIMEOUT_MS : Number(timeoutText) };
}

/**
 * Opens the registry and makes sure Redis answers (one `SCARD`, bounded by
 * the timeout) before anything is sent; returns it with the current count.
 */
async function connect(settings: RedisSettings): Promise<{ registry: RedisRegistry; size: number }> {
  const { createRedisRegistry } = await loadRedisPackage();
  let registry: RedisRegistry;
  try {
    registry = createRedisRegistry({ url: settings.url, keyPrefix: settings.keyPrefix, timeoutMs: settings.timeoutMs });
  } catch (error) {
    // A URL @ampcors/redis refuses (a path that is no database number, no host) is a wrong invocation, not an internal error.
    if (isAmpCorsError(error)) throw new UsageError(`--url: ${error.message}`);
    throw error;
  }
  try {
    return { registry, size: await registry.size() };
  } catch (error) {
    await registry.close();
    throw new RedisUnavailableError(settings.shownUrl, error);
  }
}

/** One invalid line of a list. */
interface Problem {
  readonly input: string;
  /** `argument 2`, `stdin:3`, `domains.txt:3`. */
  readonly where: string;
  readonly code: string;
  readonly message: string;
}

/** A list of domains, canonical, or the problems found in it. */
interface DomainList {
  readonly domains: string[];
  readonly problems: Problem[];
  readonly problemCount: number;
}

/**
 * Reads and canonicalizes every domain before anything is written: one bad line and nothing is. With `publishers` (add,
 * load), a domain must also be one the `publishers` option takes as an exact rule (not a public suffix, not an AMP cache's
 * own domain), as `@ampcors/redis` checks it: here each refused line is named.
 */
async function collectDomains(
  lines: AsyncIterable<InputLine> | Iterable<InputLine>,
  where: (lineNumber: number) => string,
  publishers: boolean,
): Promise<DomainList> {
  const domains: string[] = [];
  const problems: Problem[] = [];
  let problemCount = 0;
  const refused = publishers ? publisherRuleCheck(CACHES) : undefined;
  for await (const { text, lineNumber } of lines) {
    try {
      const domain = canonicalDomain(text);
      const refusal = refused?.(domain);
      if (refusal !== undefined) throw refusal;
      domains.push(domain);
    } catch (error) {
      if (!isAmpCorsError(error)) throw error;
      problemCount++;
      const message = error.message.replace(/^publishers: /, '');
      if (problems.length < MAX_LISTED_PROBLEMS) problems.push({ input: text, where: where(lineNumber), code: error.code, message });
    }
  }
  return { domains, problems, problemCount };
}

/** The domains of `add` and `remove`: the arguments, or stdin lines. */
function domainLines(
  context: CommandContext,
  args: readonly string[],
): { lines: AsyncIterable<InputLine> | Iterable<InputLine>; where: (n: number) => string } {
  if (args.length === 0 || (args.length === 1 && args[0] === '-')) {
    if (args.length === 0 && context.io.stdin.isTTY === true) throw new UsageError('no domains given: pass them as arguments, or pipe one per line on stdin');
    return { lines: readLines(context.io.stdin, { comments: true }), where: (n) => `stdin:${n}` };
  }
  return { lines: args.map((text, index) => ({ text, lineNumber: index + 1 })), where: (n) => `argument ${n}` };
}

/** The lines of `load`'s list: a file, or stdin for `-` or nothing. */
async function listLines(
  context: CommandContext,
  args: readonly string[],
): Promise<{ lines: AsyncIterable<InputLine>; where: (n: number) => string; name: string }> {
  if (args.length > 1) throw new UsageError('redis load reads one list of domains (a file, or - for stdin)');
  const input = args[0] ?? '-';
  if (input === '-') {
    if (args.length === 0 && context.io.stdin.isTTY === true) throw new UsageError('no domains given: pass a file, or pipe one domain per line');
    return { lines: readLines(context.io.stdin, { comments: true }), where: (n) => `stdin:${n}`, name: 'stdin' };
  }
  const path = resolve(context.io.cwd, input);
  await stat(path).catch((error: unknown) => {
    throw new FileError('read', input, error);
  });
  const source: InputStream = createReadStream(path);
  return { lines: readLines(source, { comments: true }), where: (n) => `${input}:${n}`, name: input };
}

/** Reads a whole list, turning a read error of the stream (EISDIR, EIO…) into an unreadable file. */
async function readAll(
  lines: AsyncIterable<InputLine> | Iterable<InputLine>,
  where: (n: number) => string,
  name: string,
  publishers: boolean,
): Promise<DomainList> {
  try {
    return await collectDomains(lines, where, publishers);
  } catch (error) {
    // A FileError of readLines already names the input.
    if (error instanceof CliError) throw error;
    if (typeof (error as NodeJS.ErrnoException).code === 'string') throw new FileError('read', name, error);
    throw error;
  }
}

/** Every listed problem on stderr (text) or as one line each on stdout (`--json`), then the total. */
async function reportProblems(context: CommandContext, list: DomainList): Promise<number> {
  const summary = `${list.problemCount} invalid domain${list.problemCount === 1 ? '' : 's'}; nothing was written to Redis`;
  if (context.json) {
    for (const problem of list.problems) await writeJson(context.io.stdout, { input: problem.input, error: { code: problem.code, message: problem.message } });
    await writeJson(context.io.stdout, { error: { code: 'invalid-domain', message: summary } });
    return EXIT.badInput;
  }
  for (const problem of list.problems) await writeLine(context.io.stderr, `ampcors: ${problem.where}: ${problem.message}`);
  const more = list.problemCount - list.problems.length;
  if (more > 0) await writeLine(context.io.stderr, `ampcors: … and ${more} more invalid domain${more === 1 ? '' : 's'}`);
  await writeLine(context.io.stderr, `ampcors: ${summary}`);
  return EXIT.badInput;
}

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}

/** add, remove, load: validate everything, check that Redis answers, write, then report the counts. */
async function change(context: CommandContext, subcommand: 'add' | 'remove' | 'load', args: readonly string[]): Promise<number> {
  const settings = settingsOf(context);
  const source = subcommand === 'load' ? await listLines(context, args) : { ...domainLines(context, args), name: 'stdin' };
  const list = await readAll(source.lines, source.where, source.name, subcommand !== 'remove');
  if (list.problemCount > 0) return reportProblems(context, list);
  const { registry } = await connect(settings);
  try {
    let changed: number;
    let total: number;
    try {
      if (subcommand === 'add') changed = await registry.add(list.domains);
      else if (subcommand === 'remove') changed = await registry.remove(list.domains);
      else changed = await registry.load(list.domains);
      total = await registry.size();
    } catch (error) {
      if (!isAmpCorsError(error)) throw new RedisUnavailableError(settings.shownUrl, error);
      throw new CliError(EXIT.badInput, error.code, error.message);
    }
    const n = list.domains.length;
    const key = `${settings.keyPrefix}domains`;
    const summary =
      subcommand === 'remove'
        ? { command: 'remove', domains: n, removed: changed, total, key }
        : { command: subcommand, domains: n, added: changed, total, key };
    let text: string;
    if (subcommand === 'remove') text = `removed ${changed} of ${plural(n, 'domain')} (${n - changed} not present); ${key} holds ${total}`;
    else if (subcommand === 'add') text = `added ${changed} of ${plural(n, 'domain')} (${n - changed} already present); ${key} holds ${total}`;
    else text = `loaded ${plural(n, 'domain')}: ${changed} new, ${n - changed} already present; ${key} holds ${total}`;
    if (context.json) await writeJson(context.io.stdout, summary);
    else await writeLine(context.io.stdout, text);
    return EXIT.ok;
  } finally {
    await registry.close();
  }
}

/** count: how many publisher domains the registry holds. */
async function count(context: CommandContext, args: readonly string[]): Promise<number> {
  if (args.length > 0) throw new UsageError('redis count takes no arguments');
  const settings = settingsOf(context);
  const { registry, size } = await connect(settings);
  await registry.close();
  const key = `${settings.keyPrefix}domains`;
  if (context.json) await writeJson(context.io.stdout, { command: 'count', total: size, key });
  else await writeLine(context.io.stdout, `${key} holds ${size}`);
  return EXIT.ok;
}

/** check: the verdict of `createAsyncVerifier({ source: registry })` for each origin; exit 5 when Redis stops answering. */
async function check(context: CommandContext, args: readonly string[]): Promise<number> {
  const settings = settingsOf(context);
  if (args.length === 0 && context.io.stdin.isTTY === true) throw new UsageError('no origin given: pass one as an argument, or pipe one per line on stdin');
  const { registry } = await connect(settings);
  try {
    const verifier = createAsyncVerifier({ source: registry });
    return await forEachInput({ ...context, positionals: args }, 'origin', async (input) => {
      const malformed = malformedOrigin(input);
      if (malformed) return malformed;
      const verdict = await verifier.verify(input);
      const unavailable = !verdict.allowed && verdict.reason === 'source-unavailable';
      return {
        code: verdict.allowed ? EXIT.ok : unavailable ? EXIT.unavailable : EXIT.denied,
        text: [verdictText(verdict)],
        ...(unavailable ? { message: `Redis at ${settings.shownUrl} stopped answering: ${input} could not be judged` } : {}),
        json: verdictJson(verdict),
      };
    });
  } finally {
    await registry.close();
  }
}

/** `ampcors redis …`: the shared publisher registry of `@ampcors/redis`. */
export const redis: Command = {
  summary: 'change or query the shared Redis publisher registry (add, remove, load, count, check)',
  usage: 'redis <add|remove|load|count|check> [arguments] [--url <redis-url>] [--key-prefix <prefix>] [--timeout <ms>]',
  options: {
    url: { type: 'string', arg: '<redis-url>', description: `the Redis server (default ${DEFAULT_REDIS_URL}); credentials are never printed` },
    'key-prefix': {
      type: 'string',
      arg: '<prefix>',
      description: `key namespace, as your servers' createRedisRegistry uses it (default ${DEFAULT_KEY_PREFIX})`,
    },
    timeout: { type: 'string', arg: '<ms>', description: `give up when Redis does not answer within this long (default ${DEFAULT_REDIS_TIMEOUT_MS})` },
  },
  examples: [
    'ampcors redis add shop.example blog.example',
    'ampcors redis remove blog.example --url redis://redis.internal:6379',
    'ampcors redis load domains.txt --key-prefix prod:',
    'ampcors redis check https://shop-example.cdn.ampproject.org',
  ],
  details: [
    'Subcommands:',
    '  add <domain>…           add publisher domains (arguments, or one per line on stdin)',
    '  remove <domain>…        remove publisher domains and the prefixes still pointing at them',
    '  load <domains.txt|->    load a large list (one domain per line, # comments) in pipelined batches',
    '  count                   how many publisher domains the registry holds',
    '  check <origin>          the verdict of a verifier whose only publishers are the registry',
    '',
    'Every domain is validated before anything is written: one invalid line (reported with its',
    'line number, exit 3) and Redis is left untouched. Redis unreachable: exit 5.',
    `Needs the optional package ${REDIS_PACKAGE} (npm install ${REDIS_PACKAGE}); without it: exit 6.`,
  ],
  exitCodes: {
    [EXIT.ok]: 'done (check: every origin allowed)',
    [EXIT.denied]: 'check: an origin denied',
    [EXIT.usage]: 'usage error',
    [EXIT.badInput]: 'an invalid domain (nothing is written); check: an origin that does not parse',
    [EXIT.unreadableFile]: 'load: the list could not be read',
    [EXIT.unavailable]: 'Redis could not be reached, or stopped answering',
    [EXIT.missingPackage]: `${REDIS_PACKAGE} is not installed`,
  },
  run: async (context) => {
    const [subcommand, ...args] = context.positionals;
    if (subcommand === undefined || !(SUBCOMMANDS as readonly string[]).includes(subcommand)) {
      throw new UsageError(
        subcommand === undefined
          ? `redis needs a subcommand: ${SUBCOMMANDS.join(', ')}`
          : `unknown redis subcommand ${JSON.stringify(subcommand)} (known: ${SUBCOMMANDS.join(', ')})`,
      );
    }
    const which = subcommand as Subcommand;
    if (which === 'count') return count(context, args);
    if (which === 'check') return check(context, args);
    return change(context, which, args);
  },
};
