/**
 * The `tickwork` command line: parses arguments with Node's own `util.parseArgs`, opens
 * the store, runs one command and prints its result (a table, or JSON with `--json`).
 * Every error is one line on stderr; the exit code says which kind: 0 ok, 1 failure
 * (the store, a missing job, a refusal), 2 bad usage.
 */
import { parseArgs } from 'node:util';
import { Scheduler, TickworkError, ValidationError, type Store } from '../src/index.js';
import { STORE_COMMANDS, preview, type Flags, type Output } from './commands.js';
import { openStore, type ConnectionFlags } from './connect.js';
import { serveDashboard, type DashboardFlags } from './dashboard.js';
import { describeValue, messageOf, oneLine } from './table.js';
import { HELP, UsageError } from './usage.js';

export interface CliIo {
  readonly stdout: (text: string) => void;
  readonly stderr: (text: string) => void;
  readonly env: NodeJS.ProcessEnv;
  /** Asks a yes/no question; undefined when stdin is not a terminal. */
  readonly confirm: ((question: string) => Promise<boolean>) | undefined;
  /** Resolves when a long-running command (`dashboard`) should stop: SIGINT or SIGTERM for the bin. */
  readonly untilStopped: () => Promise<void>;
}

/** A store that does not answer in this long is reported, instead of the command hanging. */
const STORE_TIMEOUT_MS = 15_000;

const OPTIONS = {
  help: { type: 'boolean', short: 'h' },
  json: { type: 'boolean' },
  redis: { type: 'string' },
  prefix: { type: 'string' },
  postgres: { type: 'string' },
  schema: { type: 'string' },
  partitions: { type: 'string' },
  status: { type: 'string', multiple: true },
  limit: { type: 'string' },
  data: { type: 'string' },
  key: { type: 'string' },
  from: { type: 'string' },
  to: { type: 'string' },
  yes: { type: 'boolean', short: 'y' },
  tz: { type: 'string' },
  count: { type: 'string' },
  port: { type: 'string' },
  host: { type: 'string' },
  token: { type: 'string' },
} as const;

const CONNECTION_FLAGS = ['redis', 'prefix', 'postgres', 'schema', 'partitions'] as const;
const PREVIEW_FLAGS: readonly (keyof Flags)[] = ['tz', 'count', 'from'];
const DASHBOARD_FLAGS: readonly string[] = ['port', 'host', 'token'];

/** Runs the command line `argv` (without `node` and the script) and resolves its exit code. */
export async function runCli(argv: readonly string[], io: CliIo): Promise<number> {
  let json = argv.includes('--json');
  try {
    const { values, positionals } = parseArgs({ args: [...argv], options: OPTIONS, allowPositionals: true, strict: true });
    json = values.json === true;
    const [command, ...rest] = positionals;
    if (values.help === true || command === 'help') {
      io.stdout(HELP);
      return 0;
    }
    if (command === undefined) {
      io.stderr(HELP);
      return 2;
    }
    const flags: Flags = values;
    if (command === 'preview') {
      if (rest.length !== 1) throw new UsageError('preview takes one schedule, quoted: tickwork preview "0 9 * * 1-5"');
      refuseFlags(values, (flag) => PREVIEW_FLAGS.includes(flag as keyof Flags), command);
      print(io, json, preview(rest[0]!, flags));
      return 0;
    }
    if (command === 'dashboard') {
      if (rest.length > 0) throw new UsageError(`dashboard takes no arguments (got ${JSON.stringify(rest[0])})`);
      refuseFlags(values, (flag) => (CONNECTION_FLAGS as readonly string[]).includes(flag) || DASHBOARD_FLAGS.includes(flag), command);
      return await dashboard(values, io);
    }
    const spec = STORE_COMMANDS[command];
    if (spec === undefined) throw new UsageError(`unknown command ${JSON.stringify(command)}; run tickwork --help`);
    if (spec.takesName && rest.length !== 1) throw new UsageError(`${command} takes one job name: tickwork ${command} <name>`);
    if (!spec.takesName && rest.length > 0) throw new UsageError(`${command} takes no arguments (got ${JSON.stringify(rest[0])})`);
    refuseFlags(values, (flag) => (CONNECTION_FLAGS as readonly string[]).includes(flag) || spec.flags.includes(flag as keyof Flags), command);
    const { store, label } = openStore(values, io.env);
    try {
      const scheduler = new Scheduler({ store, logger: false });
      const output = await withTimeout(spec.run({ scheduler, name: rest[0] ?? '', flags, confirm: io.confirm }));
      print(io, json, output);
      return 0;
    } catch (error) {
      // Which store failed, so that a wrong URL, prefix or schema shows in the one line.
      if (error instanceof TickworkError && error.code === 'STORE') throw new TickworkError('STORE', `${label}: ${withCause(error)}`);
      throw error;
    } finally {
      await closeQuietly(store);
    }
  } catch (error) {
    const [code, message] = describe(error);
    io.stderr(json ? `${JSON.stringify({ error: { code: errorCode(error), message } })}\n` : `tickwork: ${message}\n`);
    return code;
  }
}

/** Serves the dashboard until `io.untilStopped` resolves (SIGINT or SIGTERM for the bin). */
async function dashboard(values: ConnectionFlags & DashboardFlags, io: CliIo): Promise<number> {
  const { store, label } = openStore(values, io.env);
  try {
    const serving = await serveDashboard(store, values, io.env);
    io.stdout(`tickwork dashboard on ${serving.url} (${label}${serving.readOnly ? ', read-only: give --token to allow actions' : ''}); Ctrl-C stops it\n`);
    await Promise.race([io.untilStopped(), serving.closed]);
    serving.stop();
    await serving.closed;
    return 0;
  } finally {
    await closeQuietly(store);
  }
}

function print(io: CliIo, json: boolean, output: Output): void {
  io.stdout(json ? `${JSON.stringify(output.json, null, 2)}\n` : output.text);
}

function refuseFlags(values: Record<string, unknown>, allowed: (flag: string) => boolean, command: string): void {
  for (const [flag, value] of Object.entries(values)) {
    if (value === undefined || flag === 'json' || flag === 'help' || allowed(flag)) continue;
    throw new UsageError(`--${flag} is not an option of ${command}`);
  }
}

/** The exit code and the one-line message of a failure. */
function describe(error: unknown): [number, string] {
  if (error instanceof UsageError) return [2, error.message];
  if (isParseArgsError(error)) return [2, `${oneLine(error.message)}; run tickwork --help`];
  if (error instanceof ValidationError) {
    const issues = error.issues.map((issue) => `${flagOf(issue.path)}${issue.message} (got ${describeValue(issue.value)})`);
    return [2, oneLine(issues.join('; '))];
  }
  if (error instanceof TickworkError) return [1, oneLine(withCause(error))];
  return [1, oneLine(messageOf(error))];
}

/** Which flag or argument a field of the API's input came from. */
function flagOf(path: string): string {
  const flag: Record<string, string> = {
    after: '--from',
    from: '--from',
    to: '--to',
    timezone: '--tz',
    count: '--count',
    limit: '--limit',
    status: '--status',
    data: '--data',
    idempotencyKey: '--key',
    prefix: '--prefix',
    schema: '--schema',
    partitions: '--partitions',
    url: '--redis',
    connectionString: '--postgres',
    name: 'job name',
    '': 'job name',
  };
  const root = path.split('.')[0] ?? '';
  const name = flag[root] ?? (root.startsWith('schedule') || root === 'options' ? 'schedule' : root);
  return `${name}: `;
}

function withCause(error: TickworkError): string {
  const cause = (error as { cause?: unknown }).cause;
  if (cause === undefined) return error.message;
  const detail = messageOf(cause);
  return detail === '' || error.message.includes(detail) ? error.message : `${error.message}: ${detail}`;
}

function errorCode(error: unknown): string {
  if (error instanceof UsageError || error instanceof ValidationError || isParseArgsError(error)) return 'USAGE';
  return error instanceof TickworkError ? error.code : 'ERROR';
}

/** `parseArgs` reports an unknown flag or a flag without its value as a TypeError with an `ERR_PARSE_ARGS_*` code. */
function isParseArgsError(error: unknown): error is TypeError {
  const code = (error as { code?: unknown } | null)?.code;
  return error instanceof TypeError && typeof code === 'string' && code.startsWith('ERR_PARSE_ARGS');
}

function withTimeout<T>(work: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new TickworkError('STORE', `the store did not answer within ${STORE_TIMEOUT_MS / 1000} s`)), STORE_TIMEOUT_MS);
  });
  return Promise.race([work, timeout]).finally(() => clearTimeout(timer));
}

async function closeQuietly(store: Store): Promise<void> {
  try {
    await withTimeout(store.close());
  } catch {
    // The command's outcome is already decided; main.ts exits even if a connection lingers.
  }
}
