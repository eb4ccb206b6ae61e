/**
 * Spawns scheduler processes (`worker.ts`), collects their JSON event lines into one
 * merged log, kills and restarts them, and analyses the log: runs per tick,
 * duplicates, holes, overlapping executions, recovery after a SIGKILL.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const WORKER = fileURLToPath(new URL('./worker.ts', import.meta.url));

/** One JSON line of a worker, plus the harness's own bookkeeping lines (`proc:*`). */
export interface LogLine {
  readonly ev: string;
  readonly t: number;
  readonly pid: number;
  readonly instance: string;
  readonly job?: string;
  readonly runId?: string;
  readonly scheduledAt?: number;
  readonly attempt?: number;
  readonly outcome?: string;
  readonly reason?: string;
  readonly from?: number;
  readonly to?: number;
  readonly message?: string;
  readonly value?: boolean | readonly number[];
  readonly [key: string]: unknown;
}

export interface WorkerConfig {
  readonly store: 'redis' | 'redis-cluster' | 'postgres';
  readonly namespace: string;
  readonly leaseMs?: number;
  readonly redisUrl?: string;
  /** Redis only: the worker's own client fails commands after this many ms. */
  readonly redisCommandTimeoutMs?: number;
  readonly clusterNodes?: readonly { host: string; port: number }[];
  readonly databaseUrl?: string;
  /** The store's partition count (the store's default when absent). */
  readonly partitions?: number;
}

export interface WorkerSpec {
  readonly instance: string;
  readonly jobs: readonly string[];
  /** Extra environment variables (e.g. `TW_FANOUT_AT`). */
  readonly env?: Readonly<Record<string, string>>;
  /** Registered when the worker gets SIGUSR2. */
  readonly lateJobs?: readonly string[];
}

export interface Proc {
  readonly instance: string;
  readonly spec: WorkerSpec;
  readonly child: ChildProcess;
  readonly pid: number;
  readonly stderr: string[];
  exit: { code: number | null; signal: NodeJS.Signals | null; t: number } | undefined;
  readonly exited: Promise<void>;
  /** Set when the harness sent SIGKILL. */
  killedAt: number | undefined;
}

export class Harness {
  readonly lines: LogLine[] = [];
  readonly procs: Proc[] = [];
  readonly #config: WorkerConfig;
  readonly #waiters = new Set<() => void>();

  constructor(config: WorkerConfig) {
    this.#config = config;
  }

  /** The live (not exited) process of an instance name. */
  live(instance: string): Proc | undefined {
    return this.procs.find((proc) => proc.instance === instance && proc.exit === undefined);
  }

  spawn(spec: WorkerSpec): Proc {
    const config = this.#config;
    const child = spawn(process.execPath, ['--import', 'tsx', WORKER], {
      env: {
        ...process.env,
        TW_STORE: config.store,
        TW_NS: config.namespace,
        TW_INSTANCE: spec.instance,
        TW_JOBS: spec.jobs.join(','),
        TW_LATE_JOBS: (spec.lateJobs ?? []).join(','),
        TW_LEASE_MS: String(config.leaseMs ?? 2000),
        ...spec.env,
        ...(config.redisUrl === undefined ? {} : { TW_REDIS_URL: config.redisUrl }),
        ...(config.redisCommandTimeoutMs === undefined ? {} : { TW_REDIS_COMMAND_TIMEOUT: String(config.redisCommandTimeoutMs) }),
        ...(config.clusterNodes === undefined ? {} : { TW_CLUSTER_NODES: JSON.stringify(config.clusterNodes) }),
        ...(config.databaseUrl === undefined ? {} : { TW_DATABASE_URL: config.databaseUrl }),
        ...(config.partitions === undefined ? {} : { TW_PARTITIONS: String(config.partitions) }),
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    if (child.pid === undefined) throw new Error(`could not spawn worker ${spec.instance}`);
    const stderr: string[] = [];
    let exitResolve: () => void = () => {};
    const proc: Proc = {
      instance: spec.instance,
      spec,
      child,
      pid: child.pid,
      stderr,
      exit: undefined,
      exited: new Promise<void>((resolve) => (exitResolve = resolve)),
      killedAt: undefined,
    };
    this.procs.push(proc);
    this.#push({ ev: 'proc:spawn', t: Date.now(), pid: proc.pid, instance: spec.instance });
    let buffer = '';
    child.stdout?.setEncoding('utf8');
    child.stdout?.on('data', (chunk: string) => {
      buffer += chunk;
      let newline: number;
      while ((newline = buffer.indexOf('\n')) >= 0) {
        const text = buffer.slice(0, newline);
        buffer = buffer.slice(newline + 1);
        if (text.trim() === '') continue;
        try {
          this.#push(JSON.parse(text) as LogLine);
        } catch {
          stderr.push(`[stdout, not JSON] ${text}`);
        }
      }
    });
    child.stderr?.setEncoding('utf8');
    child.stderr?.on('data', (chunk: string) => stderr.push(chunk));
    child.on('exit', (code, signal) => {
      proc.exit = { code, signal, t: Date.now() };
      this.#push({ ev: 'proc:exit', t: Date.now(), pid: proc.pid, instance: spec.instance, code, signal });
      exitResolve();
    });
    return proc;
  }

  /** SIGKILL: the process dies at once, mid-handler. */
  async kill(proc: Proc): Promise<number> {
    const t = Date.now();
    proc.killedAt = t;
    this.#push({ ev: 'proc:kill', t, pid: proc.pid, instance: proc.instance });
    proc.child.kill('SIGKILL');
    await proc.exited;
    return t;
  }

  signal(proc: Proc, signal: NodeJS.Signals): void {
    proc.child.kill(signal);
  }

  /** SIGTERM to every live process (graceful `stop({ abort: true })`); SIGKILL after `graceMs`. */
  async stopAll(graceMs = 8_000): Promise<void> {
    const live = this.procs.filter((proc) => proc.exit === undefined);
    this.#push({ ev: 'proc:stop-all', t: Date.now(), pid: process.pid, instance: '-' });
    for (const proc of live) proc.child.kill('SIGTERM');
    const timer = setTimeout(() => {
      for (const proc of live) if (proc.exit === undefined) proc.child.kill('SIGKILL');
    }, graceMs);
    await Promise.all(live.map((proc) => proc.exited));
    clearTimeout(timer);
  }

  /** Kills every process still alive, at once (for `afterAll`/`finally`). */
  async killAll(): Promise<void> {
    const live = this.procs.filter((proc) => proc.exit === undefined);
    for (const proc of live) proc.child.kill('SIGKILL');
    await Promise.all(live.map((proc) => proc.exited));
  }

  /** Resolves with the first line (already logged or future) matching `predicate`; rejects after `timeoutMs`. */
  waitFor(what: string, predicate: (line: LogLine) => boolean, timeoutMs: number, fromIndex = 0): Promise<LogLine> {
    return new Promise((resolve, reject) => {
      let index = fromIndex;
      const check = (): boolean => {
        for (; index < this.lines.length; index += 1) {
          const line = this.lines[index] as LogLine;
          if (predicate(line)) {
            resolve(line);
            return true;
          }
        }
        return false;
      };
      if (check()) return;
      const waiter = (): void => {
        if (check()) {
          this.#waiters.delete(waiter);
          clearTimeout(timer);
        }
      };
      const timer = setTimeout(() => {
        this.#waiters.delete(waiter);
        reject(new Error(`timed out after ${timeoutMs} ms waiting for ${what}\n${this.diagnostics()}`));
      }, timeoutMs);
      this.#waiters.add(waiter);
    });
  }

  #push(line: LogLine): void {
    this.lines.push(line);
    for (const waiter of [...this.#waiters]) waiter();
  }

  /** Writes the merged log (JSON lines) to the temp directory; returns the file's path. */
  save(label: string): string {
    const file = path.join(os.tmpdir(), `tickwork-mp-${label}-${Date.now()}.jsonl`);
    writeFileSync(file, this.lines.map((line) => JSON.stringify(line)).join('\n') + '\n');
    return file;
  }

  /** The last lines and the stderr of every process, for failure messages. */
  diagnostics(tail = 40): string {
    const out: string[] = [];
    out.push(`--- last ${tail} log lines ---`);
    for (const line of this.lines.slice(-tail)) out.push(JSON.stringify(line));
    for (const proc of this.procs) {
      const err = proc.stderr.join('').trim();
      out.push(`--- ${proc.instance} pid ${proc.pid} exit ${JSON.stringify(proc.exit)} stderr: ${err === '' ? '(empty)' : err.slice(-2000)}`);
    }
    return out.join('\n');
  }
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

// ---------------------------------------------------------------------------------
// Analysis over the merged log
// ---------------------------------------------------------------------------------

export interface TickRuns {
  readonly scheduledAt: number;
  readonly runIds: Set<string>;
  /** Handler starts (`start` lines), every attempt on every process. */
  readonly starts: LogLine[];
  /** `run:succeeded` events. */
  readonly successes: LogLine[];
}

/** Per tick (`scheduledAt`) of a job: its run IDs, handler starts and successes. */
export function runsByTick(lines: readonly LogLine[], job: string): Map<number, TickRuns> {
  const ticks = new Map<number, TickRuns>();
  const get = (scheduledAt: number): TickRuns => {
    let tick = ticks.get(scheduledAt);
    if (tick === undefined) {
      tick = { scheduledAt, runIds: new Set(), starts: [], successes: [] };
      ticks.set(scheduledAt, tick);
    }
    return tick;
  };
  for (const line of lines) {
    if (line.job !== job || line.scheduledAt === undefined || line.runId === undefined) continue;
    if (line.ev === 'start') {
      const tick = get(line.scheduledAt);
      tick.runIds.add(line.runId);
      tick.starts.push(line);
    } else if (line.ev === 'run:succeeded') {
      const tick = get(line.scheduledAt);
      tick.runIds.add(line.runId);
      tick.successes.push(line);
    } else if (line.ev === 'run:created') {
      get(line.scheduledAt).runIds.add(line.runId);
    }
  }
  return ticks;
}

export interface Duplicate {
  readonly scheduledAt: number;
  readonly why: string;
  readonly lines: readonly LogLine[];
}

/**
 * Ticks that ran twice: two different run IDs for one tick, two successful
 * completions, or two handler starts with the same attempt number (a recovered run
 * legitimately starts again, with a higher attempt; a run released by a shutdown
 * starts again with the same attempt).
 */
export function duplicates(lines: readonly LogLine[], job: string): Duplicate[] {
  const found: Duplicate[] = [];
  for (const tick of runsByTick(lines, job).values()) {
    const all = [...tick.starts, ...tick.successes];
    if (tick.runIds.size > 1) found.push({ scheduledAt: tick.scheduledAt, why: `${tick.runIds.size} run IDs: ${[...tick.runIds].join(', ')}`, lines: all });
    if (tick.successes.length > 1) found.push({ scheduledAt: tick.scheduledAt, why: `${tick.successes.length} successful completions`, lines: all });
    // The same attempt may start again only after a shutdown released it (`stop({ abort: true })`: released, not failed).
    const seen = new Set<number>();
    for (const start of tick.starts) {
      const attempt = start.attempt as number;
      if (seen.has(attempt)) {
        const released = lines.some(
          (l) => l.ev === 'end' && l.runId === start.runId && l.attempt === attempt && l.outcome === 'aborted' && l.reason === 'shutdown' && l.t <= start.t,
        );
        if (!released) found.push({ scheduledAt: tick.scheduledAt, why: `attempt ${attempt} started twice without a release in between`, lines: all });
      }
      seen.add(attempt);
    }
  }
  return found;
}

/**
 * Ticks whose handler returned normally more than once. Allowed (SPEC §5: handlers
 * run at least once per run): when the store write recording the success fails, the
 * run's lease expires and another attempt runs the handler again. Reported, not a
 * duplicate as long as the run succeeded only once.
 */
export function reexecutions(lines: readonly LogLine[], job: string): { scheduledAt: number; ends: LogLine[] }[] {
  const byTick = new Map<number, LogLine[]>();
  for (const l of lines) {
    if (l.ev !== 'end' || l.job !== job || l.outcome !== 'ok' || l.scheduledAt === undefined) continue;
    byTick.set(l.scheduledAt, [...(byTick.get(l.scheduledAt) ?? []), l]);
  }
  return [...byTick.entries()].filter(([, ends]) => ends.length > 1).map(([scheduledAt, ends]) => ({ scheduledAt, ends }));
}

export interface HoleReport {
  /** Ticks in the window with a handler start. */
  readonly ran: number[];
  /** Ticks in the window with no start, covered by a `tick:missed` (coalesced) or `tick:skipped` event. */
  readonly explained: { tick: number; by: string }[];
  /** Ticks in the window with no start and no event explaining why. */
  readonly unexplained: number[];
  readonly window: { from: number; to: number };
}

/** Every-second ticks of `job` in `[from, to]` (whole seconds) and what happened to each. */
export function holes(lines: readonly LogLine[], job: string, from: number, to: number, stepMs = 1000): HoleReport {
  const ticks = runsByTick(lines, job);
  const missed = lines.filter((l) => l.ev === 'tick:missed' && l.job === job);
  const skipped = lines.filter((l) => l.ev === 'tick:skipped' && l.job === job);
  const report: HoleReport = { ran: [], explained: [], unexplained: [], window: { from, to } };
  for (let tick = Math.ceil(from / stepMs) * stepMs; tick <= to; tick += stepMs) {
    if ((ticks.get(tick)?.starts.length ?? 0) > 0) {
      report.ran.push(tick);
      continue;
    }
    const miss = missed.find((m) => (m.from as number) <= tick && tick <= (m.to as number));
    const skip = skipped.find((s) => s.scheduledAt === tick);
    if (miss !== undefined) report.explained.push({ tick, by: `tick:missed ${String(miss.reason)} (${iso(miss.from)}..${iso(miss.to)}) from ${miss.instance}` });
    else if (skip !== undefined) report.explained.push({ tick, by: `tick:skipped by ${skip.instance}` });
    else report.unexplained.push(tick);
  }
  return report;
}

export interface Execution {
  readonly runId: string;
  readonly attempt: number;
  readonly scheduledAt: number;
  readonly instance: string;
  readonly pid: number;
  readonly start: number;
  readonly end: number;
  /** `ok`, `aborted`, `killed` (SIGKILL: end = kill time), `open` (never ended: end = end of log). */
  readonly how: string;
}

/** Handler executions of a job across all processes, from `start`/`end` lines and kill times. */
export function executions(lines: readonly LogLine[], job: string): Execution[] {
  const kills = new Map<number, number>();
  const exits = new Map<number, number>();
  for (const line of lines) {
    if (line.ev === 'proc:kill') kills.set(line.pid, line.t);
    if (line.ev === 'proc:exit') exits.set(line.pid, line.t);
  }
  const lastT = lines.reduce((max, l) => Math.max(max, l.t), 0);
  const result: Execution[] = [];
  for (const start of lines) {
    if (start.ev !== 'start' || start.job !== job) continue;
    const end = lines.find(
      (l) => l.ev === 'end' && l.pid === start.pid && l.runId === start.runId && l.attempt === start.attempt && l.t >= start.t,
    );
    const base = {
      runId: start.runId as string,
      attempt: start.attempt as number,
      scheduledAt: start.scheduledAt as number,
      instance: start.instance,
      pid: start.pid,
      start: start.t,
    };
    if (end !== undefined) result.push({ ...base, end: end.t, how: end.outcome ?? 'ok' });
    else if (kills.has(start.pid)) result.push({ ...base, end: kills.get(start.pid) as number, how: 'killed' });
    else result.push({ ...base, end: exits.get(start.pid) ?? lastT, how: 'open' });
  }
  return result.sort((x, y) => x.start - y.start);
}

/** Pairs of executions whose [start, end] intervals overlap, and the most at once. */
export function overlaps(execs: readonly Execution[]): { maxConcurrent: number; pairs: [Execution, Execution][] } {
  const pairs: [Execution, Execution][] = [];
  for (let i = 0; i < execs.length; i += 1) {
    for (let j = i + 1; j < execs.length; j += 1) {
      const x = execs[i] as Execution;
      const y = execs[j] as Execution;
      if (x.start < y.end && y.start < x.end) pairs.push([x, y]);
    }
  }
  const points = execs.flatMap((e) => [
    { t: e.start, d: 1 },
    { t: e.end, d: -1 },
  ]);
  points.sort((p, q) => p.t - q.t || p.d - q.d); // an end before a start at the same instant
  let current = 0;
  let maxConcurrent = 0;
  for (const p of points) {
    current += p.d;
    maxConcurrent = Math.max(maxConcurrent, current);
  }
  return { maxConcurrent, pairs };
}

/** CatchUp: the order of first starts must be tick order, and no tick between the first and last may be absent. */
export function catchUpOrder(lines: readonly LogLine[], job: string, stepMs = 1000): { order: number[]; outOfOrder: number[]; gaps: number[] } {
  const firstStart = new Map<number, number>();
  for (const line of lines) {
    if (line.ev === 'start' && line.job === job && line.scheduledAt !== undefined && !firstStart.has(line.scheduledAt)) {
      firstStart.set(line.scheduledAt, line.t);
    }
  }
  const order = [...firstStart.entries()].sort((x, y) => x[1] - y[1]).map(([tick]) => tick);
  const outOfOrder: number[] = [];
  for (let i = 1; i < order.length; i += 1) if ((order[i] as number) <= (order[i - 1] as number)) outOfOrder.push(order[i] as number);
  const sorted = [...order].sort((x, y) => x - y);
  const gaps: number[] = [];
  for (let i = 1; i < sorted.length; i += 1) {
    for (let tick = (sorted[i - 1] as number) + stepMs; tick < (sorted[i] as number); tick += stepMs) gaps.push(tick);
  }
  return { order, outOfOrder, gaps };
}

/** Kill time → the killed run's next start on another process. */
export function recovery(lines: readonly LogLine[], killed: LogLine, killT: number): { ms: number | undefined; by: LogLine | undefined } {
  const by = lines.find(
    (l) => l.ev === 'start' && l.runId === killed.runId && l.pid !== killed.pid && (l.attempt as number) > (killed.attempt as number) && l.t >= killT,
  );
  return { ms: by === undefined ? undefined : by.t - killT, by };
}

export function iso(t: unknown): string {
  return typeof t === 'number' ? new Date(t).toISOString().slice(11, 23) : String(t);
}

/** A compact rendering of log lines for failure messages. */
export function show(lines: readonly LogLine[]): string {
  return lines
    .map((l) => `${iso(l.t)} ${l.instance}/${l.pid} ${l.ev} ${l.runId ?? l.job ?? ''} ${l.attempt === undefined ? '' : `#${l.attempt}`} ${l.outcome ?? l.message ?? ''}`)
    .join('\n');
}

export function showExec(execs: readonly Execution[]): string {
  return execs.map((e) => `${e.runId}#${e.attempt} on ${e.instance}/${e.pid}: ${iso(e.start)}..${iso(e.end)} (${e.how})`).join('\n');
}
