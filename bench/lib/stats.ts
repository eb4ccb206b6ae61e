/** Small measurement helpers shared by every scenario (run in child processes with `--expose-gc`). */
import { performance } from 'node:perf_hooks';

/** Wall-clock time in fractional milliseconds (sub-millisecond resolution, same epoch as Date.now()). */
export function nowMs(): number {
  return performance.timeOrigin + performance.now();
}

export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return NaN;
  const index = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[index] as number;
}

export interface LagSummary {
  count: number;
  p50: number;
  p99: number;
  max: number;
  mean: number;
}

export function summarize(values: readonly number[]): LagSummary {
  const sorted = [...values].sort((a, b) => a - b);
  const sum = sorted.reduce((acc, v) => acc + v, 0);
  return {
    count: sorted.length,
    p50: percentile(sorted, 50),
    p99: percentile(sorted, 99),
    max: sorted.length === 0 ? NaN : (sorted[sorted.length - 1] as number),
    mean: sorted.length === 0 ? NaN : sum / sorted.length,
  };
}

/** CPU time (user + system) of this process, in milliseconds. */
export function cpuMs(): number {
  const usage = process.cpuUsage();
  return (usage.user + usage.system) / 1000;
}

/** Forces a full GC (needs `--expose-gc`) a few times so heap figures settle. */
export function gc(): void {
  const collect = (globalThis as { gc?: () => void }).gc;
  if (collect === undefined) throw new Error('run with --expose-gc');
  for (let i = 0; i < 3; i += 1) collect();
}

export interface MemorySample {
  heapUsed: number;
  rss: number;
}

export function memory(): MemorySample {
  gc();
  const usage = process.memoryUsage();
  return { heapUsed: usage.heapUsed, rss: usage.rss };
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Reads `--name value` from argv (child scenario options). */
export function arg(name: string, fallback: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 && process.argv[i + 1] !== undefined ? (process.argv[i + 1] as string) : fallback;
}

/** Children report by writing one line `@@RESULT <json>` to stdout. */
export function report(result: unknown): void {
  process.stdout.write(`@@RESULT ${JSON.stringify(result)}\n`);
}

/** The first whole second at least `leadMs` from now. */
export function nextSecond(leadMs: number): number {
  return Math.ceil((Date.now() + leadMs) / 1000) * 1000;
}

/** Per-fire bookkeeping for lag scenarios: lag values, duplicates, and which nominal ticks were seen. */
export class FireLog {
  readonly lags: number[] = [];
  readonly seen = new Set<string>();
  duplicates = 0;
  constructor(
    readonly windowStart: number,
    readonly windowEnd: number,
  ) {}

  /** Records a fire of `job` for nominal time `nominal` that started at `startedAt`; ignores ticks outside the window. */
  record(job: string, nominal: number, startedAt: number): void {
    if (nominal < this.windowStart || nominal >= this.windowEnd) return;
    const key = `${job}@${nominal}`;
    if (this.seen.has(key)) {
      this.duplicates += 1;
      return;
    }
    this.seen.add(key);
    this.lags.push(startedAt - nominal);
  }
}
