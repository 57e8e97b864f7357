/**
 * `ampcors explain`: the spec §4 step trace of `explainOrigin` from
 * `@ampcors/core`, as text or one JSON object per origin.
 */
import {
  type AmpCache,
  CACHES,
  canonicalDomain,
  createVerifier,
  type ExplainStep,
  explainOrigin,
  type OriginExplanation,
  type PrefixSource,
  prefixForms,
  type ReverseOriginResult,
  type Verdict,
} from '@ampcors/core';
import {
  badConfiguration,
  CACHE_OPTION,
  type Command,
  cacheOption,
  EXIT,
  forEachInput,
  malformedOrigin,
  stringOption,
  UsageError,
  verdictJson,
  verdictText,
} from './command-kit.js';
import { LIST_FILE_HELP, readListArgument } from './input-lines.js';
import { writeLine } from './output.js';

/**
 * Indexes, once, which listed rules forward-compute each prefix — what
 * `explainOrigin` reports as `producedBy`, found per origin by a map lookup
 * instead of hashing the whole list again for every origin.
 */
function indexPrefixSources(publishers: readonly string[]): ReadonlyMap<string, readonly PrefixSource[]> {
  const index = new Map<string, PrefixSource[]>();
  for (const listed of publishers) {
    let publisherDomain: string;
    try {
      publisherDomain = canonicalDomain(listed.startsWith('*.') ? listed.slice(2) : listed);
    } catch {
      continue; // the verifier has refused such a list already
    }
    // prefixForms lists each prefix once (first form wins): one entry per listed rule and prefix.
    for (const { prefix, form } of prefixForms(publisherDomain)) {
      const sources = index.get(prefix);
      const source: PrefixSource = { listed, publisherDomain, form };
      if (sources) sources.push(source);
      else index.set(prefix, [source]);
    }
  }
  return index;
}

/** The explanation of `origin` as a JSON object: caches by their id, the input first. */
function explanationJson(origin: string, explanation: OriginExplanation): Record<string, unknown> {
  const { steps, result, verdict, producedBy, configError } = explanation;
  const { cache, ...resultRest } = result as ReverseOriginResult & { cache?: AmpCache };
  return {
    origin,
    steps,
    result: cache === undefined ? resultRest : { ...resultRest, cache: cache.id },
    ...(verdict !== undefined ? { verdict: verdictJson(verdict) } : {}),
    ...(producedBy !== undefined ? { producedBy } : {}),
    ...(configError !== undefined ? { configError } : {}),
  };
}

const INDENT = '              ';

function stepLines(step: ExplainStep, index: number): string[] {
  const shown = (value: string) => (value === '' ? '""' : value);
  let value: string;
  if (step.status === 'failed') value = `${shown(step.input)}  ✗ ${step.reason ?? 'failed'}`;
  else if (step.output === null) value = shown(step.input);
  else if (step.output === step.input) value = `${shown(step.input)} (unchanged)`;
  else value = `${shown(step.input)} → ${shown(step.output)}`;
  return [`${String(index + 1).padStart(3)}. ${step.status.padEnd(8)} ${step.name.padEnd(17)} ${step.title}`, `${INDENT}${value}`, `${INDENT}${step.note}`];
}

function resultLine(result: ReverseOriginResult, judged: boolean): string {
  if (result.ok && !result.hashed) return `result:      ${result.publisherDomain} (cache ${result.cache.id}, prefix ${result.prefix}, form ${result.form})`;
  if (result.ok)
    return `result:      hashed prefix ${result.prefix} on cache ${result.cache.id}: not reversible${judged ? '' : ' (--publishers tells whose it is)'}`;
  return `result:      ${result.reason}: ${result.detail}`;
}

function producedByLine(sources: readonly PrefixSource[]): string {
  if (sources.length === 0) return 'produced by: no listed publisher domain has this prefix';
  const named = sources.map((s) => `${s.publisherDomain}${s.listed === s.publisherDomain ? '' : ` (listed as ${s.listed})`} with form ${s.form}`);
  return `produced by: ${named.join('; ')}`;
}

/** The explanation as text: the origin, one block per step, the result, and with publishers the verdict and who produced the prefix. */
function explanationText(origin: string, explanation: OriginExplanation): string[] {
  const lines = [`origin:      ${origin}`, ...explanation.steps.flatMap(stepLines), resultLine(explanation.result, explanation.verdict !== undefined)];
  if (explanation.verdict !== undefined) lines.push(`verdict:     ${verdictText(explanation.verdict)}`);
  const prefix = 'prefix' in explanation.result ? explanation.result.prefix : undefined;
  if (explanation.producedBy !== undefined && prefix !== undefined) lines.push(producedByLine(explanation.producedBy));
  return lines;
}

/**
 * The exit code of an explanation of an origin that parses: with a verdict,
 * 0 allowed and 1 denied; without, 0 when a publisher domain was found and 1
 * otherwise (a hashed prefix, or not a reversible cache origin).
 */
function explanationCode(explanation: OriginExplanation): number {
  if (explanation.verdict !== undefined) return explanation.verdict.allowed ? EXIT.ok : EXIT.denied;
  return explanation.result.ok && !explanation.result.hashed ? EXIT.ok : EXIT.denied;
}

/**
 * Adds the verdict and the listed rules that produce the prefix to a
 * publisher-less explanation: the same fields `explainOrigin` gives with
 * `publishers`, from a verifier and an index built once.
 */
function judgeWith(
  verify: (origin: string) => Verdict,
  sources: ReadonlyMap<string, readonly PrefixSource[]>,
): (origin: string, explanation: OriginExplanation) => OriginExplanation {
  return (origin, explanation) => {
    const prefix = 'prefix' in explanation.result ? explanation.result.prefix : undefined;
    return { ...explanation, verdict: verify(origin), producedBy: prefix === undefined ? [] : [...(sources.get(prefix) ?? [])] };
  };
}

/** `ampcors explain`: the step-by-step reading of a cache origin (spec §4), with a verdict when publishers are given. */
export const explain: Command = {
  summary: 'explain, step by step, how ampcors reads an Origin (spec §4), with the verdict for a publisher list',
  usage: 'explain <origin> [--publishers <list|@file> [--origins <list|@file>]] [--cache <id>]',
  options: {
    publishers: {
      type: 'string',
      arg: '<list|@file>',
      description: 'publisher domains (example.com, *.example.org), a comma list or @file: adds the verdict and which listed domain produces the prefix',
    },
    origins: {
      type: 'string',
      arg: '<list|@file>',
      description: "the publisher's own origins, a comma list or @file, for the verdict (default: https:// + each publisher domain)",
    },
    cache: { ...CACHE_OPTION, description: `only this cache is registered (${CACHES.map((c) => c.id).join(', ')}; default: all)` },
  },
  examples: [
    'ampcors explain https://0-en--us-example-com-0.cdn.ampproject.org',
    'ampcors explain https://v2c4ucasgcskftbjt4c7phpkbqedcdcqo23tkamleapoa5o6fygq.cdn.ampproject.org --publishers @domains.txt',
    'ampcors explain --json --publishers example.com < origins.txt',
  ],
  details: [
    'Each step prints its status (done, skipped, failed), its input → output and a note;',
    'then the result (the publisher domain, a hashed prefix, or why the origin is not reversible).',
    'With --publishers: the verdict as `ampcors check` gives it, and the listed domains whose prefix it is',
    '(the only way to tell whose a hashed prefix is). An origin that does not parse is explained too',
    '(the step that refuses it), with a "did you mean" when only case, a slash or a path is wrong.',
    LIST_FILE_HELP,
  ],
  exitCodes: {
    [EXIT.ok]: 'a publisher domain was found (with --publishers: every origin allowed)',
    [EXIT.denied]: 'a hashed prefix or not a reversible cache origin (with --publishers: an origin denied)',
    [EXIT.usage]: 'usage error',
    [EXIT.badInput]: 'an origin that does not parse; a publisher list refused',
    [EXIT.unreadableFile]: 'a --publishers or --origins @file could not be read, is not a regular file, or is over its limit',
  },
  run: async (context) => {
    const cache = cacheOption(context);
    const caches = cache ? [cache] : undefined;
    const publishers = stringOption(context, 'publishers');
    const origins = stringOption(context, 'origins');
    if (origins !== undefined && publishers === undefined) throw new UsageError('--origins goes with --publishers');
    let judge: ((origin: string, explanation: OriginExplanation) => OriginExplanation) | undefined;
    if (publishers !== undefined) {
      const warn = (message: string) => writeLine(context.io.stderr, `ampcors: warning: ${message}`);
      const list = await readListArgument(publishers, context.io.cwd, '--publishers', warn);
      const own = origins === undefined ? undefined : await readListArgument(origins, context.io.cwd, '--origins', warn);
      try {
        const verifier = createVerifier({ publishers: list, ...(own ? { origins: own } : {}), ...(caches ? { caches } : {}) });
        judge = judgeWith((o) => verifier.verify(o), indexPrefixSources(list));
      } catch (error) {
        throw badConfiguration(error);
      }
    }
    let count = 0;
    return forEachInput(context, 'origin', (input) => {
      const traced = explainOrigin(input, caches ? { caches } : {});
      const explanation = judge ? judge(input, traced) : traced;
      const text = explanationText(input, explanation);
      const shown = count++ === 0 ? text : ['', ...text];
      // An origin that does not parse: its explanation (the refusing step), plus the error every command gives it.
      const malformed = malformedOrigin(input);
      if (malformed) {
        return {
          code: malformed.code,
          text: [...shown, `error:       ${malformed.message ?? ''}`],
          json: { ...malformed.json, ...explanationJson(input, explanation) },
        };
      }
      return { code: explanationCode(explanation), text: shown, json: explanationJson(input, explanation) };
    });
  },
};
