/**
 * Trace context across processes (issue 16): a `trigger()` and a `backfill()` called
 * inside a span in process A (which never starts, so cannot run anything) are run by
 * process B, and each of B's `tickwork.run` spans links to A's span: the W3C
 * `traceparent` travels with the run through Redis, and through Postgres.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { DATABASE_URL, REDIS_URL, deleteRedisKeys, requireServer, uniqueNamespace } from '../integration/servers.js';

const WORKER = fileURLToPath(new URL('./trace-worker.ts', import.meta.url));
const redisUp = await requireServer('redis');
const postgresUp = await requireServer('postgres');
type StoreKind = 'redis' | 'postgres';

interface Line {
  readonly ev: string;
  readonly [field: string]: unknown;
}

/** A worker process and the JSON lines it printed so far. */
function start(role: 'executor' | 'caller', store: StoreKind, prefix: string): { child: ChildProcess; lines: Line[]; exited: Promise<number | null> } {
  const child = spawn(process.execPath, ['--import', 'tsx', WORKER], {
    env: { ...process.env, TW_ROLE: role, TW_STORE: store, TW_NS: prefix, TW_REDIS_URL: REDIS_URL, TW_DATABASE_URL: DATABASE_URL },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const lines: Line[] = [];
  let buffered = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    buffered += chunk.toString();
    const parts = buffered.split('\n');
    buffered = parts.pop() ?? '';
    for (const part of parts) if (part.trim() !== '') lines.push(JSON.parse(part) as Line);
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { child, lines, exited };
}

async function waitFor<T extends Line>(lines: Line[], what: string, test: (line: Line) => boolean, timeoutMs = 20_000): Promise<T[]> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const found = lines.filter(test);
    if (found.length > 0) return found as T[];
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; lines: ${JSON.stringify(lines)}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

async function linksAcrossProcesses(store: StoreKind, prefix: string): Promise<void> {
  const b = start('executor', store, prefix);
  try {
    await waitFor(b.lines, 'B ready', (line) => line.ev === 'ready');
    const a = start('caller', store, prefix);
    const [caller] = await waitFor(a.lines, "A's caller span", (line) => line.ev === 'caller');
    expect(await a.exited).toBe(0);
    const runSpans = (line: Line): boolean => line.ev === 'span' && line.name === 'tickwork.run';
    const spans = await waitFor(b.lines, "B's three run spans", (line) => runSpans(line) && b.lines.filter(runSpans).length >= 3);
    const byRun = new Map(spans.map((span) => [(span.attributes as Record<string, unknown>)['tickwork.run.id'], span]));
    expect([...byRun.keys()].sort()).toEqual(['daily.backfill.1767052800', 'daily.backfill.1767139200', 'report.manual.from-a']);
    for (const span of spans) {
      expect(span.links).toEqual([{ traceId: caller?.traceId, spanId: caller?.spanId, traceFlags: 1, isRemote: true }]);
      expect(span.traceId).not.toBe(caller?.traceId); // linked, not parented: the run's trace is its own
    }
    expect(a.lines.filter((line) => line.ev === 'span' && line.name === 'tickwork.run')).toEqual([]);
    expect([...a.lines, ...b.lines].filter((line) => line.ev === 'error')).toEqual([]);
  } finally {
    b.child.kill('SIGTERM');
    await b.exited;
  }
}

describe.skipIf(!redisUp)('multi-process: trace context on Redis', () => {
  const prefix = uniqueNamespace('twtrace');
  afterAll(async () => {
    const admin = new Redis(REDIS_URL);
    await deleteRedisKeys(admin, prefix);
    await admin.quit();
  });

  it("a trigger() and a backfill() in process A run in process B, whose tickwork.run spans link to A's span", () => linksAcrossProcesses('redis', prefix));
});

describe.skipIf(!postgresUp)('multi-process: trace context on Postgres', () => {
  const schema = uniqueNamespace('twtrace');
  afterAll(async () => {
    const client = new pg.Client({ connectionString: DATABASE_URL });
    await client.connect();
    await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    await client.end();
  });

  it("a trigger() and a backfill() in process A run in process B, whose tickwork.run spans link to A's span", () => linksAcrossProcesses('postgres', schema));
});
