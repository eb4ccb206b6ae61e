/**
 * The store's calls that span partitions: reads over several jobs (ready runs, job
 * pages, runs of jobs) and the three sweeps (expired leases, pending timeouts,
 * history TTL). Their scripts take several partition tags as KEYS. A single Redis
 * runs such a script once for every partition (it does not check slots), so these
 * calls cost what they cost before partitions; a cluster refuses keys of several
 * slots in one script (CROSSSLOT), so there each partition gets its own call and the
 * replies are merged here.
 *
 * The sweeps promise "at most `limit`, earliest first" across the whole store. On a
 * cluster they first read each partition's earliest due entries (plain sorted-set
 * reads), pick the store-wide first `limit`, and then sweep each partition for its
 * share only. Atomic per run, as the contract asks; not across partitions.
 */
import { LEASE_EXPIRED_ERROR, PENDING_TIMEOUT_ERROR, type ExpireInput, type ExpirePendingRunsResult, type RecoverExpiredRunsInput, type RunRecord, type SweepRunsResult } from '../../src/store.js';
import { asArray, asString, decodeRuns, encodeError, num } from './codec.js';
import type { RunScript } from './batcher.js';
import type { RedisClient } from './connection.js';
import type { KeyLayout } from './key-layout.js';
import * as runLua from './run-scripts.js';
import * as jobsLua from './scripts.js';

/** A due entry of a sweep's sorted set on a cluster: which partition, when, and its tie-breaks. */
interface Due {
  readonly tag: string;
  readonly at: number;
  readonly id: string;
  /** An index lease's index; -1 for a plain run's (which comes first on a tie). */
  readonly index: number;
}

/** Byte order, as the scripts compare IDs (ASCII). */
function byBytes(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function dueOrder(a: Due, b: Due): number {
  return a.at - b.at || byBytes(a.id, b.id) || a.index - b.index;
}

/** An `expirePending` reply (run-scripts.ts): the runs failed, and the next pendingUntil of its partitions ('' when none). */
function decodeExpiry(reply: unknown): { runs: RunRecord[]; nextAt: string } {
  const [runs, nextAt] = asArray(reply, 'expirePendingRuns reply');
  return { runs: decodeRuns(runs), nextAt: asString(nextAt, 'nextAt') };
}

/** The runs failed, with the earliest of the partitions' next pendingUntil (`decodeExpiry`). */
function expiryOf(runs: RunRecord[], nextAts: readonly string[]): ExpirePendingRunsResult {
  const next = nextAts.filter((at) => at !== '').map(Number);
  return next.length === 0 ? { runs } : { runs, nextAt: Math.min(...next) };
}

/** A single Redis's `expirePending` reply over every partition. */
function expiryOfAll(reply: unknown): ExpirePendingRunsResult {
  const { runs, nextAt } = decodeExpiry(reply);
  return expiryOf(runs, [nextAt]);
}

/** Script limits must be whole, non-negative numbers. */
export function count(limit: number): string {
  return num(Number.isFinite(limit) ? Math.max(0, Math.floor(limit)) : 1_000_000_000);
}

export class PartitionCalls {
  readonly #layout: KeyLayout;
  readonly #client: RedisClient;
  readonly #run: RunScript;
  /** One call per partition (a cluster), or one for all of them (a single Redis). */
  readonly perPartition: boolean;

  constructor(layout: KeyLayout, client: RedisClient, run: RunScript) {
    this.#layout = layout;
    this.#client = client;
    this.#run = run;
    this.perPartition = client.isCluster && !layout.single;
  }

  /** Items by the tag of their job (`tagOf`), in order of first appearance. */
  group<T>(items: Iterable<T>, tagOf: (item: T) => string): Map<string, T[]> {
    const groups = new Map<string, T[]>();
    for (const item of items) {
      const tag = tagOf(item);
      const group = groups.get(tag);
      if (group === undefined) groups.set(tag, [item]);
      else group.push(item);
    }
    return groups;
  }

  /** `script` over `groups` (tag → job names): ARGV `head`, then per tag its count and names. One reply per call made. */
  grouped(script: string, head: readonly string[], groups: ReadonlyMap<string, readonly string[]>): Promise<unknown[]> {
    const argsOf = (names: readonly string[]): string[] => [String(names.length), ...names];
    if (!this.perPartition) {
      return this.#run(script, [...groups.keys()], [...head, ...[...groups.values()].flatMap(argsOf)]).then((reply) => [reply]);
    }
    return Promise.all([...groups].map(([tag, names]) => this.#run(script, [tag], [...head, ...argsOf(names)])));
  }

  /** `script` with `args` over every partition. One reply per call made. */
  everyPartition(script: string, args: readonly string[]): Promise<unknown[]> {
    if (!this.perPartition) return this.#run(script, this.#layout.tags, args).then((reply) => [reply]);
    return Promise.all(this.#layout.tags.map((tag) => this.#run(script, [tag], args)));
  }

  /**
   * A page of jobs by name (`LIST_JOBS` replies, to merge). On a cluster, each partition's
   * first `limit` names are read first (names only), and only the partitions among the
   * store-wide first `limit` read their records, up to the last of those names: each
   * reading its full `limit` of records, as a plain call per partition would, read about
   * `partitions` times the page to keep one page. A job created meanwhile may come in
   * too (the caller keeps the first `limit`); none in the range is left out.
   */
  async jobPage(after: string, limit: string): Promise<unknown[]> {
    if (!this.perPartition) return this.everyPartition(jobsLua.LIST_JOBS, [after, limit]);
    const from = after === '' ? '-' : `(${after}`;
    const names = await Promise.all(this.#layout.tags.map(async (tag) => (await this.#client.zrangebylex(`${tag}:jobs`, from, '+', 'LIMIT', 0, Number(limit))).map((name) => ({ tag, name }))));
    const page = names.flat().sort((a, b) => byBytes(a.name, b.name)).slice(0, Number(limit));
    const last = page.at(-1)?.name;
    if (last === undefined) return [];
    return Promise.all([...new Set(page.map((entry) => entry.tag))].map((tag) => this.#run(jobsLua.LIST_JOBS, [tag], [after, limit, last])));
  }

  async recoverExpiredRuns(input: RecoverExpiredRunsInput): Promise<RunRecord[]> {
    const args = (limit: number): string[] => [num(input.now), count(limit), encodeError(LEASE_EXPIRED_ERROR)];
    if (!this.perPartition) return decodeRuns(await this.#run(runLua.RECOVER_EXPIRED_RUNS, this.#layout.tags, args(input.limit)));
    const due = await this.#due(input.limit, async (tag, limit) => {
      const [plain, indices] = await Promise.all(
        [':running', ':running-indices'].map((set) => this.#client.zrange(`${tag}${set}`, '-inf', `(${input.now}`, 'BYSCORE', 'LIMIT', 0, limit, 'WITHSCORES')),
      );
      const entries: Due[] = [];
      for (let i = 0; i + 1 < plain!.length; i += 2) entries.push({ tag, at: Number(plain![i + 1]), id: plain![i]!, index: -1 });
      for (let i = 0; i + 1 < indices!.length; i += 2) {
        const member = indices![i]!;
        entries.push({ tag, at: Number(indices![i + 1]), id: member.slice(0, -11), index: Number(member.slice(-10)) });
      }
      return entries;
    });
    const shares = this.#shares(due);
    const swept = new Map(
      await Promise.all([...shares].map(async ([tag, share]) => [tag, decodeRuns(await this.#run(runLua.RECOVER_EXPIRED_RUNS, [tag], args(share)))] as const)),
    );
    return this.#inOrder(due, swept);
  }

  async expirePendingRuns(input: ExpireInput): Promise<ExpirePendingRunsResult> {
    const args = (limit: number): string[] => [num(input.now), count(limit), encodeError(PENDING_TIMEOUT_ERROR)];
    if (!this.perPartition) return expiryOfAll(await this.#run(runLua.EXPIRE_PENDING_RUNS, this.#layout.tags, args(input.limit)));
    const due = await this.#due(input.limit, (tag, limit) => this.#scored(tag, ':pending-until', input.now, limit));
    const shares = this.#shares(due);
    // Every partition is asked, a share of 0 included: each knows its own next pendingUntil.
    const replies = await Promise.all(this.#layout.tags.map(async (tag) => decodeExpiry(await this.#run(runLua.EXPIRE_PENDING_RUNS, [tag], args(shares.get(tag) ?? 0)))));
    const runs = this.#inOrder(due, new Map(replies.map((reply, i) => [this.#layout.tags[i] as string, reply.runs])));
    return expiryOf(runs, replies.map((reply) => reply.nextAt));
  }

  async deleteExpiredRuns(input: ExpireInput): Promise<number> {
    const args = (limit: number): string[] => [num(input.now), count(limit)];
    if (!this.perPartition) return Number(await this.#run(runLua.DELETE_EXPIRED_RUNS, this.#layout.tags, args(input.limit)));
    const due = await this.#due(input.limit, (tag, limit) => this.#scored(tag, ':expiring', input.now, limit));
    const deleted = await Promise.all([...this.#shares(due)].map(([tag, share]) => this.#run(runLua.DELETE_EXPIRED_RUNS, [tag], args(share))));
    return deleted.reduce<number>((sum, n) => sum + Number(n), 0);
  }

  /**
   * The three sweeps, in order. A single Redis runs them as one script over every
   * partition (`SWEEP_RUNS`): one command a heartbeat. A cluster's sweeps read every
   * partition first: one after the other there.
   */
  async sweep(input: ExpireInput): Promise<SweepRunsResult> {
    if (!this.perPartition) {
      const args = [num(input.now), count(input.limit), encodeError(LEASE_EXPIRED_ERROR), encodeError(PENDING_TIMEOUT_ERROR)];
      const [recovered, expired, deleted] = asArray(await this.#run(runLua.SWEEP_RUNS, this.#layout.tags, args), 'sweepRuns reply');
      return { recovered: decodeRuns(recovered), expired: expiryOfAll(expired), deleted: Number(deleted) };
    }
    const recovered = await this.recoverExpiredRuns(input);
    const expired = await this.expirePendingRuns(input);
    return { recovered, expired, deleted: await this.deleteExpiredRuns(input) };
  }

  /** The store-wide first `limit` due entries, each partition read for its own first `limit`. */
  async #due(limit: number, read: (tag: string, limit: number) => Promise<Due[]>): Promise<Due[]> {
    const n = Number(count(limit));
    if (n === 0) return [];
    const entries = (await Promise.all(this.#layout.tags.map((tag) => read(tag, n)))).flat();
    return entries.sort(dueOrder).slice(0, n);
  }

  /** Entries of a sorted set scored up to `now` (inclusive). */
  async #scored(tag: string, set: string, now: number, limit: number): Promise<Due[]> {
    const reply = await this.#client.zrange(`${tag}${set}`, '-inf', num(now), 'BYSCORE', 'LIMIT', 0, limit, 'WITHSCORES');
    const entries: Due[] = [];
    for (let i = 0; i + 1 < reply.length; i += 2) entries.push({ tag, at: Number(reply[i + 1]), id: reply[i]!, index: -1 });
    return entries;
  }

  /** How many of `due` each partition holds. */
  #shares(due: readonly Due[]): Map<string, number> {
    const shares = new Map<string, number>();
    for (const entry of due) shares.set(entry.tag, (shares.get(entry.tag) ?? 0) + 1);
    return shares;
  }

  /** Each partition's swept runs, merged in the store-wide order the due entries give (leftovers last). */
  #inOrder(due: readonly Due[], swept: ReadonlyMap<string, readonly RunRecord[]>): RunRecord[] {
    const next = new Map<string, number>();
    const runs: RunRecord[] = [];
    for (const { tag } of due) {
      const at = next.get(tag) ?? 0;
      const run = swept.get(tag)?.[at];
      if (run === undefined) continue;
      next.set(tag, at + 1);
      runs.push(run);
    }
    for (const [tag, list] of swept) runs.push(...list.slice(next.get(tag) ?? 0));
    return runs;
  }
}
