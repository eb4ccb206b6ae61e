/**
 * Fails the test during which the process saw an unhandled rejection or an uncaught
 * exception. Nothing tickwork does may reach those paths (they crash a Node app by
 * default), so a test that makes one happen fails, even if its own assertions pass.
 * Registered for every test file through `setupFiles` in vitest.config.ts.
 */
import { afterAll, afterEach } from 'vitest';

interface Escaped {
  readonly kind: 'unhandled rejection' | 'uncaught exception';
  readonly error: unknown;
}

/** One list and one pair of listeners per process: a worker that runs several test files runs this file for each. */
const KEY = Symbol.for('tickwork.test.process-guard');
const registry = globalThis as unknown as Record<symbol, Escaped[] | undefined>;
const escaped: Escaped[] = (registry[KEY] ??= install());

function install(): Escaped[] {
  const list: Escaped[] = [];
  process.on('unhandledRejection', (error) => void list.push({ kind: 'unhandled rejection', error }));
  process.on('uncaughtException', (error) => void list.push({ kind: 'uncaught exception', error }));
  return list;
}

function show(error: unknown): string {
  try {
    return error instanceof Error ? `${error.name}: ${error.message}` : String(error);
  } catch {
    return 'a value that cannot be shown';
  }
}

/** Throws (failing the current test or, from `afterAll`, the file) if anything escaped since the last check. */
function check(): void {
  if (escaped.length === 0) return;
  const found = escaped.splice(0);
  throw new Error(
    `the process saw ${found.map(({ kind, error }) => `an ${kind} (${show(error)})`).join(', ')} during this test`,
    { cause: found[0]?.error },
  );
}

afterEach(async () => {
  // Node reports a rejection as unhandled once the turn that made it is over: let a turn pass first.
  await new Promise<void>((resolve) => setImmediate(resolve));
  check();
});

afterAll(async () => {
  await new Promise<void>((resolve) => setImmediate(resolve));
  check();
});
