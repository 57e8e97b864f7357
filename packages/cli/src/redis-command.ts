/**
 * `ampcors redis …`: changes and questions to the shared publisher registry
 * of `@ampcors/redis` (add, remove, load, count, check). Domain lists are
 * validated in full before anything is written; an unreachable Redis is one
 * clear line and exit code 5.
 */
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { resolve } from 'node:path';
import { canonicalDomain, createAsyncVerifier, isAmpCorsError } from '@ampcors/core';
import type { RedisRegistry } from '@ampcors/redis';
import { type Command, type CommandContext, EXIT, forEachInput, stringOption, UsageError, verdictJson, verdictText } from './command-kit.js';
import { type InputLine, readLines, UnreadableFileError } from './input-lines.js';
import { type InputStream, writeLine } from './output.js';

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

/** Redis could not be reached, or stopped answering. */
class RedisUnavailableError extends Error {
  constructor(url: string, cause: unknown) {
    const why = cause instanceof Error ? cause.message : String(cause);
    super(`Redis at ${url} is unavailable: ${why} (is redis-server running there? see --url)`);
    this.name = 'RedisUnavailableError';
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
  if (parsed.protocol !== 'redis:' && parsed.protocol !== 'rediss:') throw new UsageError(`--url must be a redis:// or rediss:// URL, not ${parsed.protocol}//…`);
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
  const { createRedisRegistry } = await import('@ampcors/redis');
  const registry = createRedisRegistry({ url: settings.url, keyPrefix: settings.keyPrefix, timeoutMs: settings.timeoutMs });
  try {
    return { registry, size: await registry.size() };
  } catch (error) {
    await registry.close();
    throw new RedisUnavailableError(settings.shownUrl, error);
  }
}

/** A list of domains, canonical, or the problems found in it. */
interface DomainList {
  readonly domains: string[];
  readonly problems: string[];
  readonly problemCount: number;
}

/** Reads and canonicalizes every domain before anything is written: one bad line and nothing is. */
async function collectDomains(lines: AsyncIterable<InputLine> | Iterable<InputLine>, where: (lineNumber: number) => string): Promise<DomainList> {
  const domains: string[] = [];
  const problems: string[] = [];
  let problemCount = 0;
  for await (const { text, lineNumber } of lines) {
    try {
      domains.push(canonicalDomain(text));
    } catch (error) {
      if (!isAmpCorsError(error)) throw error;
      problemCount++;
      if (problems.length < MAX_LISTED_PROBLEMS) problems.push(`${where(lineNumber)}: ${error.message}`);
    }
  }
  return { domains, problems, problemCount };
}

/** The domains of `add` and `remove`: the arguments, or stdin lines. */
function domainLines(context: CommandContext, args: readonly string[]): { lines: AsyncIterable<InputLine> | Iterable<InputLine>; where: (n: number) => string } {
  if (args.length === 0 || (args.length === 1 && args[0] === '-')) {
    if (args.length === 0 && context.io.stdin.isTTY === true) throw new UsageError('no domains given: pass them as arguments, or pipe one per line on stdin');
    return { lines: readLines(context.io.stdin, { comments: true }), where: (n) => `stdin:${n}` };
  }
  return { lines: args.map((text, index) => ({ text, lineNumber: index + 1 })), where: (n) => `argument ${n}` };
}

/** The lines of `load`'s list: a file, or stdin for `-` or nothing. */
async function listLines(context: CommandContext, args: readonly string[]): Promise<{ lines: AsyncIterable<InputLine>; where: (n: number) => string; name: string }> {
  if (args.length > 1) throw new UsageError('redis load reads one list of domains (a file, or - for stdin)');
  const input = args[0] ?? '-';
  if (input === '-') {
    if (args.length === 0 && context.io.stdin.isTTY === true) throw new UsageError('no domains given: pass a file, or pipe one domain per line');
    return { lines: readLines(context.io.stdin, { comments: true }), where: (n) => `stdin:${n}`, name: 'stdin' };
  }
  const path = resolve(context.io.cwd, input);
  await stat(path).catch((error: NodeJS.ErrnoException) => {
    throw new UnreadableFileError(input, error.code ?? String(error));
  });
  const source: InputStream = createReadStream(path);
  return { lines: readLines(source, { comments: true }), where: (n) => `${input}:${n}`, name: input };
}

/** Reads a whole list, turning a read error of the stream (EISDIR, EIO…) into an unreadable file. */
async function readAll(lines: AsyncIterable<InputLine> | Iterable<InputLine>, where: (n: number) => string, name: string): Promise<DomainList> {
  try {
    return await collectDomains(lines, where);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (typeof code === 'string') throw new UnreadableFileError(name, code);
    throw error;
  }
}

async function reportProblems(context: CommandContext, list: DomainList): Promise<number> {
  for (const problem of list.problems) await writeLine(context.io.stderr, `ampcors: ${problem}`);
  const more = list.problemCount - list.problems.length;
  if (more > 0) await writeLine(context.io.stderr, `ampcors: … and ${more} more invalid domain${more === 1 ? '' : 's'}`);
  await writeLine(context.io.stderr, `ampcors: ${list.problemCount} invalid domain${list.problemCount === 1 ? '' : 's'}; nothing was written to Redis`);
  return EXIT.badInput;
}

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}

/** add, remove, load: validate everything, check that Redis answers, write, then report the counts. */
async function change(context: CommandContext, subcommand: 'add' | 'remove' | 'load', args: readonly string[]): Promise<number> {
  const settings = settingsOf(context);
  const source = subcommand === 'load' ? await listLines(context, args) : { ...domainLines(context, args), name: 'stdin' };
  const list = await readAll(source.lines, source.where, source.name);
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
      await writeLine(context.io.stderr, `ampcors: ${error.message}`);
      return EXIT.badInput;
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
    await writeLine(context.io.stdout, context.json ? JSON.stringify(summary) : text);
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
  await writeLine(context.io.stdout, context.json ? JSON.stringify({ command: 'count', total: size, key }) : `${key} holds ${size}`);
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
    'key-prefix': { type: 'string', arg: '<prefix>', description: `key namespace, as your servers' createRedisRegistry uses it (default ${DEFAULT_KEY_PREFIX})` },
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
  ],
  run: async (context) => {
    const [subcommand, ...args] = context.positionals;
    if (subcommand === undefined || !(SUBCOMMANDS as readonly string[]).includes(subcommand)) {
      throw new UsageError(subcommand === undefined ? `redis needs a subcommand: ${SUBCOMMANDS.join(', ')}` : `unknown redis subcommand ${JSON.stringify(subcommand)} (known: ${SUBCOMMANDS.join(', ')})`);
    }
    try {
      const which = subcommand as Subcommand;
      if (which === 'count') return await count(context, args);
      if (which === 'check') return await check(context, args);
      return await change(context, which, args);
    } catch (error) {
      if (!(error instanceof RedisUnavailableError)) throw error;
      await writeLine(context.io.stderr, `ampcors: ${error.message}`);
      return EXIT.unavailable;
    }
  },
};
