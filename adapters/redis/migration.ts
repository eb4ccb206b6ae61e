/**
 * Moves a prefix from the single-tag layout (version 2: every key under `{prefix}`,
 * what every store wrote before partitions) to the partitioned layout (version 3:
 * each job's keys, its runs' and its entries in the partition-wide sets under its
 * partition's tag, `key-layout.ts`). `RedisStore.init()` runs it when a store of
 * several partitions opens a version-2 prefix; README.md, "Moving from the single-tag
 * layout", is the user's side.
 *
 * - One instance migrates: it holds `{prefix}:migrating` (a lease, renewed as it
 *   goes); the others wait for the version to change (or for the lease to lapse, and
 *   then take over). Version 3 is recorded only once every job has moved, so no
 *   instance of the new layout works on the prefix before then.
 * - Job by job: its keys are copied (`DUMP`/`RESTORE ... REPLACE`) under the new tag
 *   with their entries in the partition's sets, then deleted under `{prefix}`, and
 *   the job leaves `{prefix}:jobs` last. A migration cut short (a crash, a lost
 *   connection) leaves each job either not yet moved or still listed: the next
 *   `init()` copies it again, which only rewrites the same values. Idempotent.
 * - It cannot be atomic across slots, so instances of the old layout must be stopped
 *   first: a write they make to a job already moved is lost. An instance of the
 *   single-tag layout that plans holds the lease `planner` (`{prefix}:lock:planner`,
 *   deleted when it stops, expired by Redis a minute after its lease when it dies):
 *   while that key exists the migration refuses to start (`StoreError`).
 * - The store-wide keys (version, identity, locks and lock tokens) stay where they are.
 */
import { randomUUID } from 'node:crypto';
import { StoreError } from '../../src/errors.js';
import type { RedisClient } from './connection.js';
import type { KeyLayout } from './key-layout.js';

/** How long the migration lease lasts without renewal (renewed after every page of jobs). */
const LEASE_MS = 30_000;
/** How often a waiting instance looks whether the migration has finished. */
const WAIT_MS = 100;
/** Jobs moved per page. */
const PAGE = 100;

/** The per-job keys of the single-tag layout, after `{prefix}:`. */
const JOB_KINDS = ['job', 'backfills', 'runs', 'active', 'ready', 'succeeded', 'failed'];
/** The per-run keys, after `{prefix}:`. */
const RUN_KINDS = ['run', 'indices', 'waiting'];
/** The sets of runs that every partition has its own of, by run ID. */
const RUN_SETS = ['running', 'pending-until', 'expiring'];

export interface MigrationInput {
  readonly client: RedisClient;
  readonly keys: KeyLayout;
  readonly partitions: number;
}

const delay = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Moves every job of a version-2 prefix to its partition, then records version 3 and the partition count. */
export async function migrateLayout({ client, keys, partitions }: MigrationInput): Promise<void> {
  const old = keys.global;
  const lease = `${old}:migrating`;
  const token = randomUUID();
  for (;;) {
    if ((await client.get(`${old}:version`)) !== '2') return;
    if ((await client.set(lease, token, 'PX', LEASE_MS, 'NX')) === 'OK') break;
    await delay(WAIT_MS);
  }
  try {
    if ((await client.get(`${old}:version`)) !== '2') return;
    if ((await client.exists(`${old}:lock:planner`)) === 1) {
      throw new StoreError(
        'init',
        new Error(
          `an instance of the single-tag key layout (one partition) still plans on this prefix (it holds the lease ${old}:lock:planner); ` +
            'stop every such instance before starting one of several partitions, which moves the prefix to the partitioned layout ' +
            '(the lease of an instance that died expires a minute after its leaseMs), or pass partitions: 1 to keep the single-tag layout',
        ),
      );
    }
    for (;;) {
      const names = await client.zrange(`${old}:jobs`, 0, PAGE - 1);
      if (names.length === 0) break;
      for (const name of names) await moveJob(client, old, keys.ofJob(name), name);
      if ((await client.get(lease)) !== token) throw new Error('tickwork redis store: the layout migration lease was lost');
      await client.pexpire(lease, LEASE_MS);
    }
    await client.del(...['jobs', 'ready-jobs', 'ready-jobs-built', 'running-indices', ...RUN_SETS].map((kind) => `${old}:${kind}`));
    await exec(client.multi().set(`${old}:partitions`, String(partitions)).set(`${old}:version`, '3'));
  } finally {
    if ((await client.get(lease).catch(() => undefined)) === token) await client.del(lease).catch(() => undefined);
  }
}

type Pipeline = ReturnType<RedisClient['pipeline']>;

/** Runs a pipeline (or transaction), throwing its first error; the replies in order. */
async function exec(pipeline: Pipeline): Promise<unknown[]> {
  const results = (await pipeline.exec()) ?? [];
  for (const [error] of results) if (error) throw error;
  return results.map(([, reply]) => reply);
}

/** The running index records of a fan-out run (its `indices:` hash), as `running-indices` members and scores. */
function indexLeases(id: string, records: Record<string, string>): [string, string][] {
  const leases: [string, string][] = [];
  for (const [index, json] of Object.entries(records)) {
    const record = JSON.parse(json) as { status?: string; leaseUntil?: string };
    if (record.status === 'running' && record.leaseUntil !== undefined) leases.push([record.leaseUntil, `${id} ${index.padStart(10, '0')}`]);
  }
  return leases;
}

/** Copies job `name`'s keys from tag `from` to tag `to`, then deletes them under `from` (three pipelines, each on one slot). */
async function moveJob(client: RedisClient, from: string, to: string, name: string): Promise<void> {
  const ids = await client.smembers(`${from}:runs:${name}`);
  const suffixes = [...JOB_KINDS.map((kind) => `:${kind}:${name}`), ...ids.flatMap((id) => RUN_KINDS.map((kind) => `:${kind}:${id}`))];
  const read = client.pipeline();
  for (const suffix of suffixes) read.dumpBuffer(`${from}${suffix}`);
  for (const set of RUN_SETS) for (const id of ids) read.zscore(`${from}:${set}`, id);
  for (const id of ids) read.hgetall(`${from}:indices:${id}`);
  read.zscore(`${from}:ready-jobs`, name);
  const replies = await exec(read);
  const dumps = replies.slice(0, suffixes.length) as (Buffer | null)[];
  const scores = replies.slice(suffixes.length, suffixes.length + RUN_SETS.length * ids.length) as (string | null)[];
  const indices = replies.slice(suffixes.length + scores.length, -1) as Record<string, string>[];
  const ready = replies[replies.length - 1] as string | null;

  const write = client.pipeline();
  suffixes.forEach((suffix, i) => {
    const dump = dumps[i];
    if (dump !== null && dump !== undefined) write.restore(`${to}${suffix}`, 0, dump, 'REPLACE');
  });
  RUN_SETS.forEach((set, s) =>
    ids.forEach((id, i) => {
      const score = scores[s * ids.length + i];
      if (score !== null && score !== undefined) write.zadd(`${to}:${set}`, score, id);
    }),
  );
  const leases = ids.flatMap((id, i) => indexLeases(id, indices[i] ?? {}));
  for (const [score, member] of leases) write.zadd(`${to}:running-indices`, score, member);
  if (ready !== null) write.zadd(`${to}:ready-jobs`, ready, name);
  write.zadd(`${to}:jobs`, 0, name);
  await exec(write);

  const remove = client.pipeline();
  remove.del(...suffixes.map((suffix) => `${from}${suffix}`));
  if (ids.length > 0) for (const set of RUN_SETS) remove.zrem(`${from}:${set}`, ...ids);
  if (leases.length > 0) remove.zrem(`${from}:running-indices`, ...leases.map(([, member]) => member));
  remove.zrem(`${from}:ready-jobs`, name);
  remove.zrem(`${from}:jobs`, name);
  await exec(remove);
}
