/**
 * The command table of `ampcors`: one entry per command. The shared parts
 * (exit codes, types, input handling) live in `command-kit.ts`; `explain` and
 * `redis` in their own files.
 */
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { resolve } from 'node:path';
import {
  CACHES,
  cacheOrigin,
  cacheUrl,
  createAllowSetBuilder,
  createVerifier,
  domainPrefix,
  findCache,
  isAmpCorsError,
  loadAllowSet,
  prefixForms,
  reverseOrigin,
  type ServingType,
  type Verdict,
} from '@ampcors/core';
import {
  badConfiguration,
  CACHE_OPTION,
  CliError,
  type Command,
  type CommandContext,
  type CommandOption,
  cacheOption,
  EXIT,
  forEachInput,
  malformedOrigin,
  stringOption,
  UsageError,
  verdictJson,
  verdictText,
} from './command-kit.js';
import { explain } from './explain-command.js';
import {
  describeBytes,
  FileError,
  LIST_FILE_HELP,
  MAX_ALLOW_SET_BYTES,
  readLines,
  readListArgument,
  readRegularFile,
  writeRegularFile,
} from './input-lines.js';
import { type InputStream, writeBytes, writeJson, writeLine, writeRow } from './output.js';
import { createProgressBar } from './progress-bar.js';
import { redis } from './redis-command.js';

export { CliError, type Command, type CommandContext, type CommandIo, type CommandOption, EXIT, EXIT_MEANINGS, UsageError } from './command-kit.js';

/** The `--progress` option of `check` and `compile`. */
const PROGRESS_OPTION: CommandOption = { type: 'boolean', description: 'draw progress on stderr even when it is not a terminal' };

/** Writes `ampcors: warning: …` on stderr. */
function warner(context: CommandContext): (message: string) => Promise<void> {
  return (message) => writeLine(context.io.stderr, `ampcors: warning: ${message}`);
}

const SERVING_TYPES: readonly ServingType[] = ['c', 'v', 'wp', 'cert', 'i', 'ii', 'r'];

const prefix: Command = {
  summary: 'the AMP cache domain prefix of a publisher domain (spec §2)',
  usage: 'prefix <domain>',
  options: {},
  examples: ['ampcors prefix en-us.example.com', 'ampcors prefix --json < domains.txt'],
  exitCodes: { [EXIT.ok]: 'every domain has a prefix', [EXIT.usage]: 'usage error', [EXIT.badInput]: 'an invalid domain' },
  run: (context) =>
    forEachInput(context, 'domain', (input) => {
      const value = domainPrefix(input);
      return { code: EXIT.ok, text: [value], json: { domain: input, prefix: value, forms: prefixForms(input) } };
    }),
};

const origin: Command = {
  summary: 'every cache origin of a publisher domain (one per cache)',
  usage: 'origin <domain> [--cache <id>]',
  options: { cache: CACHE_OPTION },
  examples: ['ampcors origin www.example.com', 'ampcors origin www.example.com --cache bing'],
  exitCodes: { [EXIT.ok]: 'every domain has its cache origins', [EXIT.usage]: 'usage error (or an unknown --cache)', [EXIT.badInput]: 'an invalid domain' },
  run: (context) => {
    const only = cacheOption(context);
    const caches = only ? [only] : CACHES;
    return forEachInput(context, 'domain', (input) => {
      const origins = caches.map((cache) => ({ cache: cache.id, origin: cacheOrigin(input, cache) }));
      return { code: EXIT.ok, text: origins.map((o) => o.origin), json: { domain: input, origins } };
    });
  },
};

const url: Command = {
  summary: 'the AMP cache URL of a publisher URL (spec §3)',
  usage: 'url <publisher-url> [--cache <id>] [--type c|v|wp|cert|i|ii|r] [--width <n>]',
  options: {
    cache: { type: 'string', arg: '<id>', description: `the cache (${CACHES.map((c) => c.id).join(', ')}; default ${CACHES[0]?.id})` },
    type: {
      type: 'string',
      arg: '<type>',
      description: 'serving type: c content, v viewer, wp web package, cert, i image, ii image with width, r resource (default: from the file name)',
    },
    width: { type: 'string', arg: '<n>', description: 'maximum width for --type ii' },
  },
  examples: ['ampcors url https://example.com/amp_document.html', 'ampcors url https://example.com/logo.png --type ii --width 800 --cache bing'],
  exitCodes: { [EXIT.ok]: 'every URL has its cache URL', [EXIT.usage]: 'usage error', [EXIT.badInput]: 'an invalid URL (or --type ii without --width)' },
  run: (context) => {
    const cache = cacheOption(context);
    const type = stringOption(context, 'type');
    if (type !== undefined && !(SERVING_TYPES as readonly string[]).includes(type)) {
      throw new UsageError(`--type must be one of ${SERVING_TYPES.join(', ')}`);
    }
    const widthText = stringOption(context, 'width');
    if (widthText !== undefined && !/^[1-9][0-9]{0,8}$/.test(widthText)) throw new UsageError('--width must be a positive integer');
    const options = {
      ...(cache ? { cache } : {}),
      ...(type !== undefined ? { servingType: type as ServingType } : {}),
      ...(widthText !== undefined ? { width: Number(widthText) } : {}),
    };
    return forEachInput(context, 'URL', (input) => {
      const value = cacheUrl(input, options);
      return { code: EXIT.ok, text: [value], json: { url: input, cacheUrl: value } };
    });
  },
};

const reverse: Command = {
  summary: 'the publisher domain of a cache origin (spec §4)',
  usage: 'reverse <origin>',
  options: {},
  examples: ['ampcors reverse https://0-en--us-example-com-0.cdn.ampproject.org'],
  exitCodes: {
    [EXIT.ok]: 'every origin gave its publisher domain',
    [EXIT.denied]: 'a hashed prefix, or not a reversible cache origin',
    [EXIT.usage]: 'usage error',
    [EXIT.badInput]: 'an origin that does not parse',
  },
  run: (context) =>
    forEachInput(context, 'origin', (input) => {
      const malformed = malformedOrigin(input);
      if (malformed) return malformed;
      const result = reverseOrigin(input);
      if (result.ok && !result.hashed) {
        return {
          code: EXIT.ok,
          text: [result.publisherDomain],
          json: {
            origin: input,
            ok: true,
            hashed: false,
            publisherDomain: result.publisherDomain,
            prefix: result.prefix,
            form: result.form,
            cache: result.cache.id,
          },
        };
      }
      if (result.ok) {
        return {
          code: EXIT.denied,
          message: `${input}: hashed prefix on ${result.cache.id}, not reversible; check it against an allow-set (ampcors check --allow-set)`,
          json: { origin: input, ok: true, hashed: true, prefix: result.prefix, cache: result.cache.id },
        };
      }
      // A valid origin that is not a reversible cache origin is a negative answer.
      return {
        code: EXIT.denied,
        message: `${input}: ${result.reason}: ${result.detail}`,
        json: { origin: input, ok: false, reason: result.reason, detail: result.detail, ...(result.cache ? { cache: result.cache.id } : {}) },
      };
    }),
};

const check: Command = {
  summary: 'judge an Origin as a verifier configured with publishers, or as a compiled allow-set',
  usage: 'check <origin> (--publishers <list|@file> [--origins <list|@file>] | --allow-set <file>) [--progress]',
  options: {
    publishers: {
      type: 'string',
      arg: '<list|@file>',
      description: 'publisher domains (example.com, *.example.org): a comma list, or @file for a file with one per line',
    },
    origins: {
      type: 'string',
      arg: '<list|@file>',
      description: "the publisher's own origins, a comma list or @file (default: https:// + each publisher domain)",
    },
    'allow-set': {
      type: 'string',
      arg: '<file>',
      description: `a compact allow-set written by \`ampcors compile\` (a regular file of at most ${describeBytes(MAX_ALLOW_SET_BYTES)})`,
    },
    progress: {
      ...PROGRESS_OPTION,
      description: 'count the origins on stderr even when it is not a terminal (by default: only when stderr is a terminal and stdout is not)',
    },
  },
  examples: [
    'ampcors check https://www-example-com.cdn.ampproject.org --publishers example.com,www.example.com',
    'ampcors check --publishers @publishers.txt < origins.txt',
    'ampcors check --allow-set publishers.acs --json < origins.txt > verdicts.jsonl',
  ],
  details: [
    LIST_FILE_HELP,
    `--allow-set reads a regular file of at most ${describeBytes(MAX_ALLOW_SET_BYTES)} (more than compile writes for 10 million domains);`,
    'to check a compressed set, decompress it to a file first.',
  ],
  exitCodes: {
    [EXIT.ok]: 'every origin allowed',
    [EXIT.denied]: 'an origin denied',
    [EXIT.usage]: 'usage error',
    [EXIT.badInput]: 'an origin that does not parse; a publisher list or allow-set refused',
    [EXIT.unreadableFile]: 'a file could not be read, is not a regular file, or is over its limit',
  },
  run: async (context) => {
    const publishers = stringOption(context, 'publishers');
    const origins = stringOption(context, 'origins');
    const allowSetPath = stringOption(context, 'allow-set');
    if ((publishers === undefined) === (allowSetPath === undefined)) throw new UsageError('give either --publishers or --allow-set');
    if (origins !== undefined && publishers === undefined) throw new UsageError('--origins goes with --publishers');
    const warn = warner(context);
    let judge: (origin: string) => Verdict & { detail?: string };
    if (allowSetPath !== undefined) {
      const bytes = await readRegularFile(allowSetPath, context.io.cwd, MAX_ALLOW_SET_BYTES, '--allow-set');
      try {
        const set = loadAllowSet(bytes);
        judge = (o) => set.verifyOrigin(o);
      } catch (error) {
        throw badConfiguration(error);
      }
    } else {
      const list = await readListArgument(publishers as string, context.io.cwd, '--publishers', warn);
      const own = origins === undefined ? undefined : await readListArgument(origins, context.io.cwd, '--origins', warn);
      try {
        const verifier = createVerifier({ publishers: list, ...(own ? { origins: own } : {}) });
        judge = (o) => verifier.verify(o);
      } catch (error) {
        throw badConfiguration(error);
      }
    }
    const { stdout, stderr } = context.io;
    const progress = createProgressBar(stderr, undefined, 'origins', context.values.progress === true || (stderr.isTTY === true && stdout.isTTY !== true));
    return forEachInput(
      context,
      'origin',
      (input) => {
        const malformed = malformedOrigin(input);
        if (malformed) return malformed;
        const verdict = judge(input);
        return { code: verdict.allowed ? EXIT.ok : EXIT.denied, text: [verdictText(verdict)], json: verdictJson(verdict) };
      },
      { progress },
    );
  },
};

const compile: Command = {
  summary: 'compile publisher domains (one per line) into a compact allow-set file',
  usage: 'compile <domains.txt> -o <file|-> [--cache <id>]… [--encoding rice|raw] [--hash-bytes 16|20|24|28|32] [--progress]',
  options: {
    output: {
      type: 'string',
      short: 'o',
      arg: '<file|->',
      description: 'the allow-set file to write; - writes it to stdout (the summary then goes to stderr)',
    },
    cache: { type: 'string', multiple: true, arg: '<id>', description: 'only these caches (repeatable; default: all bundled caches)' },
    encoding: { type: 'string', arg: '<rice|raw>', description: 'Rice-delta coded hashes (default) or raw hashes' },
    'hash-bytes': { type: 'string', arg: '<n>', description: 'bytes of SHA-256 kept per prefix (default 16 = 128 bits, the minimum)' },
    progress: { ...PROGRESS_OPTION, description: 'draw the progress bar on stderr even when it is not a terminal (by default: only when it is)' },
  },
  examples: [
    'ampcors compile domains.txt -o publishers.acs',
    'grep -v staging domains.txt | ampcors compile -o publishers.acs --cache google',
    'ampcors compile domains.txt -o - | gzip > publishers.acs.gz',
  ],
  details: [
    'Warns (on stderr) when the list has no domain, or repeats domains: the file is still written.',
    'The list is read line by line (a file, a pipe or stdin). -o writes a regular file (a symbolic link is followed);',
    'a FIFO or a device is refused before anything is written: write -o - and redirect stdout instead.',
  ],
  exitCodes: {
    [EXIT.ok]: 'the allow-set was written',
    [EXIT.usage]: 'usage error',
    [EXIT.badInput]: 'an invalid domain (nothing is written)',
    [EXIT.unreadableFile]: 'the list could not be read, or the allow-set not written (-o names a FIFO, a device or a directory)',
  },
  run: async (context) => {
    const output = stringOption(context, 'output');
    if (output === undefined) throw new UsageError('compile needs -o <file> (or -o - for stdout)');
    if (context.positionals.length > 1) throw new UsageError('compile reads one list of domains');
    const { stdout, stderr } = context.io;
    if (output === '-' && stdout.isTTY === true)
      throw new UsageError('-o - writes a binary allow-set to stdout, which is a terminal here: redirect it to a file or a pipe');
    const cacheValue = context.values.cache;
    const cacheIds = Array.isArray(cacheValue) ? cacheValue.filter((id): id is string => typeof id === 'string') : [];
    const caches = cacheIds.map((id) => {
      const cache = findCache(id);
      if (!cache) throw new UsageError(`unknown cache ${JSON.stringify(id)} (known: ${CACHES.map((c) => c.id).join(', ')})`);
      return cache;
    });
    const encoding = stringOption(context, 'encoding') ?? 'rice';
    if (encoding !== 'rice' && encoding !== 'raw') throw new UsageError('--encoding must be rice or raw');
    const hashBytesText = stringOption(context, 'hash-bytes') ?? '16';
    if (!['16', '20', '24', '28', '32'].includes(hashBytesText)) throw new UsageError('--hash-bytes must be 16, 20, 24, 28 or 32');
    const input = context.positionals[0] ?? '-';
    let source: InputStream;
    let total: number | undefined;
    let name = 'stdin';
    if (input === '-') {
      if (context.io.stdin.isTTY === true) throw new UsageError('no domains given: pass a file, or pipe one domain per line');
      source = context.io.stdin;
    } else {
      const path = resolve(context.io.cwd, input);
      total = await stat(path).then(
        (s) => s.size,
        (error: unknown) => {
          throw new FileError('read', input, error);
        },
      );
      source = createReadStream(path);
      name = input;
    }
    const builder = createAllowSetBuilder({ ...(caches.length > 0 ? { caches } : {}), encoding, hashBytes: Number(hashBytesText) });
    const progress = createProgressBar(stderr, total, 'domains', context.values.progress === true || stderr.isTTY === true);
    let bytesRead = 0;
    try {
      for await (const { text, lineNumber } of readLines(source, { comments: true, onBytes: (n) => (bytesRead += n) })) {
        try {
          builder.add(text);
        } catch (error) {
          if (!isAmpCorsError(error)) throw error;
          progress.clear();
          throw new CliError(EXIT.badInput, error.code, `${name}:${lineNumber}: ${error.message}`);
        }
        progress.update(bytesRead, builder.domainCount);
      }
    } catch (error) {
      progress.clear();
      if (error instanceof CliError) throw error;
      // A read error of the input stream (EISDIR, EIO…) is an unreadable file.
      if (typeof (error as NodeJS.ErrnoException).code === 'string') throw new FileError('read', name, error);
      throw error;
    }
    progress.phase('sorting and encoding', builder.domainCount);
    const bytes = builder.build();
    progress.clear();
    if (output === '-') {
      await writeBytes(stdout, bytes);
    } else {
      await writeRegularFile(output, context.io.cwd, bytes);
    }
    const set = loadAllowSet(bytes);
    const duplicates = builder.hashCount - set.size;
    const warn = warner(context);
    if (builder.domainCount === 0) await warn(`${name} holds no domain: the allow-set allows nothing`);
    else if (duplicates > 0) await warn(`${name} repeats domains: ${duplicates} of ${builder.hashCount} prefixes were duplicates, ${set.size} distinct kept`);
    const summary = {
      file: output,
      bytes: bytes.length,
      domains: builder.domainCount,
      prefixes: set.size,
      duplicatePrefixes: duplicates,
      bytesPerDomain: builder.domainCount > 0 ? Number((bytes.length / builder.domainCount).toFixed(2)) : null,
      caches: set.caches.map((c) => c.id),
      encoding: set.encoding,
      hashBytes: set.hashBytes,
    };
    // With -o -, stdout holds the allow-set: the summary goes to stderr.
    const to = output === '-' ? stderr : stdout;
    if (context.json) await writeJson(to, summary);
    else {
      const perDomain = summary.bytesPerDomain === null ? '' : ` (${summary.bytesPerDomain} B/domain)`;
      await writeLine(
        to,
        `wrote ${output === '-' ? 'stdout' : output}: ${summary.domains} domains, ${summary.prefixes} prefixes, ${summary.bytes} bytes${perDomain}, caches ${summary.caches.join(', ')}`,
      );
    }
    return EXIT.ok;
  },
};

const caches: Command = {
  summary: 'the bundled AMP cache registry (caches.json snapshot, spec §1)',
  usage: 'caches',
  options: {},
  examples: ['ampcors caches', 'ampcors caches --json'],
  exitCodes: { [EXIT.ok]: 'ok', [EXIT.usage]: 'usage error' },
  run: async (context) => {
    if (context.positionals.length > 0) throw new UsageError('caches takes no arguments');
    for (const cache of CACHES) {
      if (context.json) await writeJson(context.io.stdout, cache);
      else await writeRow(context.io.stdout, [cache.id, cache.cacheDomain, cache.name]);
    }
    return EXIT.ok;
  },
};

/**
 * The command table, in help order. To add a command, add an entry: option
 * parsing, `--help` and the command list follow from it.
 */
export const COMMANDS: Readonly<Record<string, Command>> = { prefix, origin, url, reverse, explain, check, compile, caches, redis };
