/**
 * @ampcors/cli — the `ampcors` command as a testable module: {@link run}
 * takes the arguments and injectable streams and resolves to the exit code.
 *
 * @packageDocumentation
 */
import packageJson from '../package.json' with { type: 'json' };
import { parseArgs } from 'node:util';
import { CliError, type Command, type CommandIo, COMMANDS, EXIT, EXIT_MEANINGS } from './commands.js';
import { type InputStream, type OutputStream, writeJson, writeLine, writeLines } from './output.js';

export { CliError, type Command, type CommandContext, type CommandIo, type CommandOption, COMMANDS, EXIT, EXIT_MEANINGS, UsageError } from './commands.js';
export { escapeControls, type InputStream, jsonLine, type OutputStream } from './output.js';

/** The version of the `ampcors` command: the package's own (bundled into dist at build time). */
export const VERSION: string = packageJson.version;

/** The streams of {@link run}; each defaults to the process's own. */
export interface CliIo {
  readonly stdin?: InputStream;
  readonly stdout?: OutputStream;
  readonly stderr?: OutputStream;
  /** Directory that relative file names resolve against (default `process.cwd()`). */
  readonly cwd?: string;
}

const COMMON_OPTIONS = {
  json: { type: 'boolean', description: 'write one JSON object per line' },
  help: { type: 'boolean', short: 'h', description: 'show help' },
} as const;

/** The `Exit codes:` block of a help text. */
function exitCodesHelp(meanings: Readonly<Record<number, string>>): string[] {
  return ['Exit codes:', ...Object.entries(meanings).map(([code, meaning]) => `  ${code}  ${meaning}`)];
}

/** Where "spec §n" in the help texts points. */
const SPEC_URL = 'https://github.com/ampcors/ampcors/blob/main/docs/spec.md';

function mainHelp(): string[] {
  const names = Object.keys(COMMANDS);
  const width = Math.max(...names.map((n) => n.length));
  return [
    `ampcors ${VERSION} — AMP cache origins: prefixes, URLs, reverse lookups, explanations, origin checks, compact allow-sets, the Redis registry`,
    '',
    'Usage: ampcors <command> [arguments] [--json]',
    '',
    'Commands:',
    ...names.map((name) => `  ${name.padEnd(width)}  ${(COMMANDS[name] as Command).summary}`),
    '',
    'Every command reads one input per line from stdin when no input argument (or `-`) is given.',
    'Lists (--publishers, --origins) are comma-separated; @file reads one entry per line from a file.',
    'Control characters of the input are shown escaped (\\x1b); --json output is JSON.',
    'Run `ampcors <command> --help` for its options. `ampcors --version` prints the version.',
    `"spec §n" refers to the ampcors specification: ${SPEC_URL}`,
    '',
    ...exitCodesHelp(EXIT_MEANINGS),
  ];
}

function commandHelp(name: string, command: Command): string[] {
  const options = { ...command.options, ...COMMON_OPTIONS };
  const rows = Object.entries(options).map(([option, spec]) => {
    const flag = `${'short' in spec && spec.short !== undefined ? `-${spec.short}, ` : ''}--${option}${'arg' in spec && spec.arg !== undefined ? ` ${spec.arg}` : ''}`;
    return [flag, spec.description] as const;
  });
  const width = Math.max(...rows.map(([flag]) => flag.length));
  return [
    `Usage: ampcors ${command.usage} [--json]`,
    '',
    `${name}: ${command.summary}.`,
    'Without an input argument (or with `-`), reads one input per line from stdin.',
    ...(command.details && command.details.length > 0 ? ['', ...command.details] : []),
    '',
    'Options:',
    ...rows.map(([flag, description]) => `  ${flag.padEnd(width)}  ${description}`),
    '',
    'Examples:',
    ...command.examples.map((example) => `  ${example}`),
    '',
    ...exitCodesHelp(command.exitCodes),
  ];
}

function processIo(io: CliIo): CommandIo {
  return {
    stdin: io.stdin ?? (process.stdin as InputStream),
    stdout: io.stdout ?? process.stdout,
    stderr: io.stderr ?? process.stderr,
    cwd: io.cwd ?? process.cwd(),
  };
}

/**
 * Runs the `ampcors` command line: `argv` without the node and script paths
 * (`process.argv.slice(2)`). Never throws for bad input; resolves to the exit
 * code ({@link EXIT}): 0 ok, 1 denied / not reversible, 2 usage error,
 * 3 bad input, 4 unreadable or unwritable file, 5 Redis unavailable,
 * 6 an optional package missing. An error that ends a command is one line
 * `ampcors: <message>` on stderr, or with `--json` one line
 * `{"error": {"code", "message"}}` on stdout — the shape of a bad input line,
 * without its `"input"`.
 *
 * @example await run(['prefix', 'example.com'], { stdout }) // 0, writes "example-com\n"
 */
export async function run(argv: readonly string[], io: CliIo = {}): Promise<number> {
  const streams = processIo(io);
  // --json anywhere (even next to a usage error) asks for JSON errors.
  const json = argv.includes('--json');
  const fail = async (error: CliError, hint?: string): Promise<number> => {
    if (json) await writeJson(streams.stdout, { error: { code: error.code, message: error.message } });
    else await writeLines(streams.stderr, [`ampcors: ${error.message}`, ...(hint === undefined ? [] : [hint])]);
    return error.exit;
  };
  const usage = (message: string, hint: string): Promise<number> => fail(new CliError(EXIT.usage, 'usage', message), hint);
  const [name, ...rest] = argv;
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    const topic = name === 'help' ? rest[0] : undefined;
    const command = topic === undefined || !Object.hasOwn(COMMANDS, topic) ? undefined : COMMANDS[topic];
    if (topic !== undefined && command === undefined) return usage(`unknown command ${JSON.stringify(topic)}`, 'Run `ampcors --help` for the list.');
    await writeLines(name === undefined ? streams.stderr : streams.stdout, command ? commandHelp(topic as string, command) : mainHelp());
    return name === undefined ? EXIT.usage : EXIT.ok;
  }
  if (name === '--version' || name === '-v') {
    await writeLine(streams.stdout, VERSION);
    return EXIT.ok;
  }
  const command = Object.hasOwn(COMMANDS, name) ? COMMANDS[name] : undefined;
  if (!command) return usage(`unknown command ${JSON.stringify(name)}`, 'Run `ampcors --help` for the list of commands.');
  const hint = `Run \`ampcors ${name} --help\` for its usage.`;
  const options = Object.fromEntries(
    Object.entries({ ...command.options, ...COMMON_OPTIONS }).map(([option, spec]) => [
      option,
      {
        type: spec.type,
        ...('short' in spec && spec.short !== undefined ? { short: spec.short } : {}),
        ...('multiple' in spec && spec.multiple ? { multiple: true } : {}),
      },
    ]),
  );
  let parsed: ReturnType<typeof parseArgs>;
  try {
    parsed = parseArgs({ args: [...rest], options, allowPositionals: true, strict: true });
  } catch (error) {
    return usage(error instanceof Error ? error.message : String(error), hint);
  }
  if (parsed.values.help === true) {
    await writeLines(streams.stdout, commandHelp(name, command));
    return EXIT.ok;
  }
  try {
    return await command.run({ positionals: parsed.positionals, values: parsed.values, json: parsed.values.json === true, io: streams });
  } catch (error) {
    if (error instanceof CliError) return fail(error, error.exit === EXIT.usage ? hint : undefined);
    throw error;
  }
}
