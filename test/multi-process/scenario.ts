/**
 * The scenarios every store runs (Redis, Redis Cluster, Postgres), with their
 * assertions of SPEC §6.1–6.5 over the merged log of real processes.
 */
import { expect } from 'vitest';
import { partitionOf } from '../../src/partition.js';
import {
  catchUpOrder,
  duplicates,
  executions,
  Harness,
  holes,
  iso,
  overlaps,
  recovery,
  reexecutions,
  show,
  showExec,
  sleep,
  type LogLine,
  type WorkerConfig,
} from './harness.js';

const SHARED = ['allow-1s', 'forbid-1s', 'catchup-1s'] as const;

function assertNoDuplicates(h: Harness, job: string): void {
  const dups = duplicates(h.lines, job);
  expect(
    dups.map((d) => `tick ${iso(d.scheduledAt)}: ${d.why}`),
    `${job}: ticks that ran twice (SPEC §6.1):\n${dups.map((d) => `tick ${iso(d.scheduledAt)}: ${d.why}\n${show(d.lines)}`).join('\n')}`,
  ).toEqual([]);
}

function assertNoOverlap(h: Harness, job: string, label: string): void {
  const execs = executions(h.lines, job);
  const { pairs } = overlaps(execs.filter((e) => e.how !== 'open'));
  expect(
    pairs.map(([x, y]) => `${x.runId}#${x.attempt}@${x.instance} overlaps ${y.runId}#${y.attempt}@${y.instance}`),
    `${label}: ${job} had two executions at once (SPEC §6.3):\n${showExec(execs)}`,
  ).toEqual([]);
}

function assertProcessesHealthy(h: Harness): void {
  const fatal = h.lines.filter((l) => l.ev === 'fatal');
  expect(fatal, `fatal lines:\n${show(fatal)}\n${h.diagnostics()}`).toEqual([]);
  const badExits = h.procs.filter((p) => p.killedAt === undefined && (p.exit?.code !== 0 || p.exit.signal !== null));
  expect(
    badExits.map((p) => `${p.instance}/${p.pid}: ${JSON.stringify(p.exit)}`),
    `processes that did not exit cleanly on SIGTERM:\n${h.diagnostics()}`,
  ).toEqual([]);
}

function errorsPerInstance(lines: readonly LogLine[], from = 0, to = Infinity): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const line of lines) if (line.ev === 'error' && line.t >= from && line.t <= to) counts[`${line.instance}/${line.pid}`] = (counts[`${line.instance}/${line.pid}`] ?? 0) + 1;
  return counts;
}

/** Handler starts in a process after it logged `stopping` (its `stop()` had been called). */
export function startsAfterStop(lines: readonly LogLine[]): LogLine[] {
  const stopping = new Map<number, number>();
  for (const line of lines) if (line.ev === 'stopping') stopping.set(line.pid, line.t);
  return lines.filter((l) => l.ev === 'start' && stopping.has(l.pid) && l.t > (stopping.get(l.pid) as number));
}

function runsPerJob(lines: readonly LogLine[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const line of lines) if (line.ev === 'run:succeeded' && line.job !== undefined) counts[line.job] = (counts[line.job] ?? 0) + 1;
  return counts;
}

/** How often a worker samples its partitions: two tenures that overlap by less than this are the samples' lag. */
const SAMPLE_MS = 50;

/**
 * Partition tenures (from `partitions` lines): two processes planning one partition at
 * once would mean its lease failed. (With one partition it is the planner lock.)
 */
export function partitionOverlaps(lines: readonly LogLine[]): string[] {
  const tenures: { pid: number; partition: number; from: number; to: number }[] = [];
  const open = new Map<number, Map<number, number>>();
  const close = (pid: number, partition: number, t: number): void => {
    const from = open.get(pid)?.get(partition);
    if (from !== undefined) tenures.push({ pid, partition, from, to: t });
    open.get(pid)?.delete(partition);
  };
  for (const line of lines) {
    if (line.ev === 'partitions' && Array.isArray(line.value)) {
      const now = new Set(line.value);
      const held = open.get(line.pid) ?? new Map<number, number>();
      open.set(line.pid, held);
      for (const partition of [...held.keys()]) if (!now.has(partition)) close(line.pid, partition, line.t);
      for (const partition of now) if (!held.has(partition)) held.set(partition, line.t);
    } else if (line.ev === 'proc:exit' || line.ev === 'stopping') {
      for (const partition of [...(open.get(line.pid)?.keys() ?? [])]) close(line.pid, partition, line.t);
    }
  }
  const out: string[] = [];
  for (let i = 0; i < tenures.length; i += 1) {
    for (let j = i + 1; j < tenures.length; j += 1) {
      const x = tenures[i]!;
      const y = tenures[j]!;
      if (x.pid === y.pid || x.partition !== y.partition) continue;
      const overlap = Math.min(x.to, y.to) - Math.max(x.from, y.from);
      if (overlap > SAMPLE_MS + 10) out.push(`partition ${x.partition}: ${x.pid} ${iso(x.from)}..${iso(x.to)} & ${y.pid} ${iso(y.from)}..${iso(y.to)}`);
    }
  }
  return out;
}

/** The partitions process `pid` planned at time `t` (its last `partitions` line before). */
export function partitionsAt(lines: readonly LogLine[], pid: number, t: number): number[] {
  const last = lines.filter((l) => l.ev === 'partitions' && l.pid === pid && l.t <= t).at(-1);
  return Array.isArray(last?.value) ? [...last.value] : [];
}

/**
 * When every partition of `partitions` was planned by another process than `pid` after `t`
 * (undefined: never); with `by`, by those processes only (not a restarted `pid`, say).
 */
export function takenOverAt(lines: readonly LogLine[], pid: number, partitions: readonly number[], t: number, by?: readonly number[]): number | undefined {
  const current = new Map<number, number[]>();
  for (const line of lines) {
    if (line.ev !== 'partitions' || line.pid === pid || !Array.isArray(line.value) || (by !== undefined && !by.includes(line.pid))) continue;
    current.set(line.pid, [...line.value]);
    if (line.t <= t) continue;
    const held = new Set([...current.values()].flat());
    if (partitions.every((partition) => held.has(partition))) return line.t;
  }
  return undefined;
}

/** Each live process's partitions now (from its last `partitions` line). */
export function holdings(h: Harness): Map<number, number[]> {
  const now = Date.now();
  return new Map(h.procs.filter((p) => p.exit === undefined).map((p) => [p.pid, partitionsAt(h.lines, p.pid, now)]));
}

/** Waits until every live process plans some of the `partitions` and together they plan all of them. */
export async function sharedOut(h: Harness, label: string, partitions: number, timeoutMs = 15_000): Promise<void> {
  const shared = (): boolean => {
    const held = [...holdings(h).values()];
    return held.every((p) => p.length > 0) && new Set(held.flat()).size === partitions;
  };
  for (let waited = 0; !shared(); waited += 100) {
    if (waited > timeoutMs) throw new Error(`${label}: partitions never shared out: ${JSON.stringify([...holdings(h)])}\n${h.diagnostics()}`);
    await sleep(100);
  }
}

export interface KillScenarioResult {
  readonly summary: string;
}

/**
 * Three processes a, b, c on one store. b runs `slow-kill` alone at first (a and c
 * register it on SIGUSR2, once b is mid-handler), is SIGKILLed mid-handler and
 * restarted once a survivor has recovered its run (and at least 2 s later). Proves §6.1–6.4 from the log.
 */
export async function killScenario(label: string, config: WorkerConfig, options: { killPlanner?: boolean } = {}): Promise<KillScenarioResult> {
  const h = new Harness(config);
  let passed = false;
  try {
    const leaseMs = config.leaseMs ?? 2000;
    const specA = { instance: 'a', jobs: [...SHARED, 'only-on-a'], lateJobs: ['slow-kill'] };
    const specB = { instance: 'b', jobs: [...SHARED, 'slow-kill'] };
    const specC = { instance: 'c', jobs: [...SHARED], lateJobs: ['slow-kill'] };
    // The first process takes the planner lock. By default `a`, so the kill of `b` tests run recovery
    // alone; with `killPlanner`, `b`, so the kill also tests planner failover.
    const first = h.spawn(options.killPlanner === true ? specB : specA);
    await h.waitFor(`${first.instance} planner`, (l) => l.ev === 'planner' && l.value === true && l.pid === first.pid, 20_000);
    const others = [h.spawn(options.killPlanner === true ? specA : specB), h.spawn(specC)];
    await Promise.all(others.map((proc) => h.waitFor(`${proc.instance} ready`, (l) => l.ev === 'ready' && l.pid === proc.pid, 20_000)));
    const byName = (name: string) => [first, ...others].find((proc) => proc.instance === name)!;
    const [a, b, c] = [byName('a'), byName('b'), byName('c')];
    const steadyFrom = Date.now();
    const partitions = config.partitions ?? 1;
    // With several partitions, kill b only once it plans its share (b started second holds none until a gives some back).
    if (partitions > 1) await sharedOut(h, label, partitions);

    // b is the only instance with slow-kill: wait for its handler to start there. A start whose
    // handler has already ended (b began before a and c were ready, slow on a loaded box) is no use.
    const slowStart = await h.waitFor(
      'slow-kill start on b, still running',
      (l) => l.ev === 'start' && l.job === 'slow-kill' && l.pid === b.pid && !h.lines.some((e) => e.ev === 'end' && e.pid === b.pid && e.runId === l.runId),
      12_000,
    );
    const mark = h.lines.length;
    h.signal(a, 'SIGUSR2');
    h.signal(c, 'SIGUSR2');
    await Promise.all([
      h.waitFor('a registered slow-kill', (l) => l.ev === 'registered' && l.pid === a.pid, 5_000, mark),
      h.waitFor('c registered slow-kill', (l) => l.ev === 'registered' && l.pid === c.pid, 5_000, mark),
    ]);
    await sleep(200); // let the late registrations reach the store
    const handlerStillRunning = !h.lines.some((l) => l.ev === 'end' && l.pid === b.pid && l.runId === slowStart.runId);
    expect(handlerStillRunning, `slow-kill handler on b ended before the kill:\n${show(h.lines.slice(-30))}`).toBe(true);
    const killT = await h.kill(b);
    const runningOnB = executions(h.lines, 'slow-kill')
      .concat(...SHARED.map((job) => executions(h.lines, job)))
      .filter((e) => e.pid === b.pid && e.how === 'killed');

    // The survivors recover b's run; b comes back only afterwards. A b restarted before the lease
    // expired could take the planner lock and claim the run itself, and then no survivor proves recovery.
    const recovered = await h.waitFor(
      `recovery of ${String(slowStart.runId)}`,
      (l) => l.ev === 'start' && l.runId === slowStart.runId && l.pid !== b.pid && (l.attempt as number) > (slowStart.attempt as number),
      leaseMs * 4 + 5_000,
    );
    await sleep(Math.max(0, killT + 2_000 - Date.now()));
    const b2 = h.spawn({ instance: 'b', jobs: [...SHARED, 'slow-kill'] });
    await h.waitFor('b restarted', (l) => l.ev === 'ready' && l.pid === b2.pid, 20_000);
    // Let the recovered attempt and the restarted b work for a while.
    const until = Math.max(steadyFrom + 12_000, recovered.t + 4_000);
    await sleep(Math.max(0, until - Date.now()));
    const stopT = Date.now();
    const alive = h.procs.filter((p) => p.exit === undefined).map((p) => `${p.instance}/${p.pid}`);
    expect(alive.length, `processes alive before the stop: ${alive.join(', ')}\n${h.diagnostics()}`).toBe(3);
    await h.stopAll();

    // ---- figures (printed before any assertion, so a failure still shows them) ----
    const ALL = [...SHARED, 'slow-kill', 'only-on-a'];
    const dupCount = ALL.reduce((n, job) => n + duplicates(h.lines, job).length, 0);
    const allowHoles = holes(h.lines, 'allow-1s', steadyFrom + 1_000, stopT - 1_000);
    const coalesced = allowHoles.explained;
    const plannerKilled = h.lines.filter((l) => l.ev === 'planner' && l.pid === b.pid && l.t <= killT).at(-1)?.value === true;
    const heldByB = partitionsAt(h.lines, b.pid, killT);
    // By the survivors: b's restart comes 2 s after the kill and would take free partitions too.
    const takenOver = takenOverAt(h.lines, b.pid, heldByB, killT, [a.pid, c.pid]);
    const forbidHoles = holes(h.lines, 'forbid-1s', steadyFrom + 1_000, stopT - 2_000);
    const takeover = h.lines.find((l) => l.ev === 'planner' && l.value === true && l.t > killT && l.pid !== b.pid);
    const rec = recovery(h.lines, slowStart, killT);
    const forbidExecs = executions(h.lines, 'forbid-1s');
    const catchupExecs = executions(h.lines, 'catchup-1s');
    const forbidMax = overlaps(forbidExecs.filter((e) => e.how !== 'open')).maxConcurrent;
    const catchupMax = overlaps(catchupExecs.filter((e) => e.how !== 'open')).maxConcurrent;
    const order = catchUpOrder(h.lines, 'catchup-1s');
    const onlyA = h.lines.filter((l) => l.ev === 'start' && l.job === 'only-on-a');
    const summary =
      `[${label}] kill scenario${options.killPlanner === true ? ' (b is the planner)' : ''}: runs ${JSON.stringify(runsPerJob(h.lines))}; duplicates ${dupCount}; ` +
      `allow-1s holes ${allowHoles.unexplained.length} unexplained / ${coalesced.length} coalesced over ${allowHoles.ran.length + coalesced.length + allowHoles.unexplained.length} ticks; ` +
      `forbid-1s skipped ${h.lines.filter((l) => l.ev === 'tick:skipped' && l.job === 'forbid-1s').length}; ` +
      `max concurrent forbid ${forbidMax} catchup ${catchupMax} (catchup ticks ${order.order.length}, ${order.outOfOrder.length} out of order, ${order.gaps.length} gaps); ` +
      `SIGKILL of b (was planner: ${plannerKilled}) mid slow-kill → recovered by ${rec.by?.instance} in ${rec.ms} ms (leaseMs ${leaseMs})` +
      `${plannerKilled ? `, new planner ${takeover?.instance} after ${takeover === undefined ? '?' : takeover.t - killT} ms` : ''}` +
      `${partitions > 1 ? `, b planned partitions ${heldByB.join(',')} of ${partitions}, all taken over after ${takenOver === undefined ? '?' : takenOver - killT} ms` : ''}; ` +
      `also killed on b: ${runningOnB.map((e) => e.runId).join(', ')}; only-on-a runs ${onlyA.length}, elsewhere ${onlyA.filter((l) => l.instance !== 'a').length}; ` +
      `errors ${JSON.stringify(errorsPerInstance(h.lines))}; handler starts after stop() ${startsAfterStop(h.lines).length}; ` +
      `handlers re-run after their success could not be recorded ${ALL.reduce((n, job) => n + reexecutions(h.lines, job).length, 0)}`;
    console.log(summary);

    // ---- assertions ----
    assertProcessesHealthy(h);
    // §6.1: at most one run per tick.
    for (const job of ALL) assertNoDuplicates(h, job);

    // §6.2: every allow-1s tick in the steady window ran (or was coalesced, which is reported).
    expect(
      allowHoles.unexplained.map(iso),
      `${label}: allow-1s ticks with no run and no tick:missed (SPEC §6.2):\n${show(h.lines.filter((l) => l.job === 'allow-1s' && l.ev !== 'run:created'))}`,
    ).toEqual([]);
    // With several partitions every instance plans some (b too); with one, b plans only when it started first.
    expect(plannerKilled, `${label}: b was${plannerKilled ? '' : ' not'} a planner when killed`).toBe(options.killPlanner === true || partitions > 1);
    // With allow-1s's planner alive through the kill, nothing should even be coalesced.
    if (!plannerKilled || (partitions > 1 && !heldByB.includes(partitionOf('allow-1s', partitions)))) {
      expect(coalesced, `${label}: allow-1s ticks coalesced although its planner never died`).toEqual([]);
    }
    if (partitions > 1) {
      expect(takenOver, `${label}: b's partitions ${heldByB.join(',')} never taken over`).toBeDefined();
      // Within leaseMs of the kill, plus the 50 ms sampling and the round trips of a list and an acquire (slow on this loaded 2-core box).
      expect(takenOver! - killT, `${label}: takeover of b's partitions`).toBeLessThan(leaseMs + 1_000);
    }
    // Forbid: every tick ran, was skipped, or was missed.
    expect(forbidHoles.unexplained.map(iso), `${label}: forbid-1s ticks unaccounted for`).toEqual([]);

    // §5 lease recovery: the killed slow-kill run restarted on a survivor after its lease expired.
    expect(rec.by, `${label}: killed run ${String(slowStart.runId)} never recovered`).toBeDefined();
    expect(['a', 'c'], `recovered on ${rec.by?.instance}`).toContain(rec.by?.instance);
    expect(rec.ms!, 'recovery before the lease could have expired').toBeGreaterThanOrEqual(leaseMs / 3);
    expect(rec.ms!, `${label}: recovery took too long`).toBeLessThan(leaseMs * 3 + 1_000);
    const recoveredSucceeded = h.lines.filter((l) => l.ev === 'run:succeeded' && l.runId === slowStart.runId);
    expect(recoveredSucceeded.length, `${label}: recovered run ${String(slowStart.runId)} succeeded ${recoveredSucceeded.length} times`).toBe(1);
    // Other runs b was executing when it died are recovered too.
    const unrecovered = runningOnB.filter((e) => !h.lines.some((l) => l.ev === 'run:succeeded' && l.runId === e.runId));
    expect(unrecovered.map((e) => e.runId), `${label}: runs killed on b never completed:\n${show(h.lines.slice(-60))}`).toEqual([]);

    // §6.3: Forbid and CatchUp never ran twice at once, across processes; CatchUp in tick order, no tick skipped.
    assertNoOverlap(h, 'forbid-1s', label);
    assertNoOverlap(h, 'catchup-1s', label);
    expect(order.outOfOrder.map(iso), `${label}: catchup-1s runs out of tick order: ${order.order.map(iso).join(' ')}`).toEqual([]);
    expect(order.gaps.map(iso), `${label}: catchup-1s ticks skipped: ${order.order.map(iso).join(' ')}`).toEqual([]);
    expect(order.order.length).toBeGreaterThanOrEqual(5);

    // §6.4: only-on-a ran only on a.
    expect(onlyA.filter((l) => l.instance !== 'a').map((l) => `${l.runId}@${l.instance}`), `${label}: only-on-a ran elsewhere`).toEqual([]);
    expect(onlyA.length).toBeGreaterThan(5);
    // Before a and c registered it, slow-kill ran only on b.
    const slowElsewhere = h.lines.filter((l) => l.ev === 'start' && l.job === 'slow-kill' && l.t < slowStart.t && l.instance !== 'b');
    expect(slowElsewhere.map((l) => `${l.runId}@${l.instance}`)).toEqual([]);

    // The planner leases: never two planners of one partition at once (sampled every 50 ms).
    expect(partitionOverlaps(h.lines), `${label}: two planners of a partition at once`).toEqual([]);

    passed = true;
    return { summary };
  } finally {
    await h.killAll();
    if (!passed || process.env.TW_MP_KEEP_LOGS !== undefined) console.log(`[${label}] merged log: ${h.save(label)}`);
  }
}

export interface OutageControl {
  /** Starts the outage; resolves when the server is reachable again (returns that time). */
  readonly run: () => Promise<{ from: number; to: number }>;
  readonly description: string;
  /** Whether the outage must produce `error` events in every process. */
  readonly expectErrors: boolean;
}

/**
 * Three processes; the store becomes unreachable for a while; §6.5: nobody crashes,
 * errors are reported, nothing runs twice, every Allow tick ran or was coalesced,
 * scheduling resumes under the policy rules.
 */
export async function outageScenario(label: string, config: WorkerConfig, outage: OutageControl): Promise<string> {
  const h = new Harness(config);
  let passed = false;
  try {
    const a = h.spawn({ instance: 'a', jobs: [...SHARED] });
    await h.waitFor('a ready', (l) => l.ev === 'ready' && l.pid === a.pid, 20_000);
    const b = h.spawn({ instance: 'b', jobs: [...SHARED] });
    const c = h.spawn({ instance: 'c', jobs: [...SHARED] });
    await Promise.all([
      h.waitFor('b ready', (l) => l.ev === 'ready' && l.pid === b.pid, 20_000),
      h.waitFor('c ready', (l) => l.ev === 'ready' && l.pid === c.pid, 20_000),
    ]);
    const steadyFrom = Date.now();
    await sleep(3_500);
    const { from, to } = await outage.run();
    const resumed = await h.waitFor('allow-1s running again after the outage', (l) => l.ev === 'start' && l.job === 'allow-1s' && l.t > to, 20_000);
    await sleep(6_000);
    const stopT = Date.now();
    const alive = h.procs.filter((p) => p.exit === undefined).map((p) => `${p.instance}/${p.pid}`);
    expect(alive.length, `${label}: a process died during the outage: alive ${alive.join(', ')}\n${h.diagnostics()}`).toBe(3);
    await h.stopAll();

    const errors = errorsPerInstance(h.lines, from, to + 5_000);
    const errorLines = h.lines.filter((l) => l.ev === 'error');
    const errorKinds = [...new Set(errorLines.map((l) => String(l.message).slice(0, 120)))];
    const allowHoles = holes(h.lines, 'allow-1s', steadyFrom + 1_000, stopT - 1_000);
    // A planning step whose reply timed out may still have been applied by the server after the outage:
    // the ticks it decided (skipped or coalesced) then have no event. Such ticks are tolerated only inside
    // the outage and only when a `scheduleRun` failure was reported.
    const lostReplies = h.lines.some((l) => l.ev === 'error' && String(l.message).includes('scheduleRun'));
    const inOutage = (tick: number): boolean => lostReplies && tick >= from - 1_000 && tick <= to + 1_000;
    const allowSilent = allowHoles.unexplained.filter(inOutage);
    const allowLost = allowHoles.unexplained.filter((tick) => !inOutage(tick));
    const afterHoles = holes(h.lines, 'allow-1s', resumed.t + 2_000, stopT - 1_000);
    const forbidHoles = holes(h.lines, 'forbid-1s', steadyFrom + 1_000, stopT - 2_000);
    const forbidSilent = forbidHoles.unexplained.filter(inOutage);
    const forbidLost = forbidHoles.unexplained.filter((tick) => !inOutage(tick));
    const forbidExecs = executions(h.lines, 'forbid-1s').filter((e) => e.how !== 'open');
    const catchupExecs = executions(h.lines, 'catchup-1s').filter((e) => e.how !== 'open');
    const forbid = overlaps(forbidExecs);
    const catchup = overlaps(catchupExecs);
    const order = catchUpOrder(h.lines, 'catchup-1s');
    const catchupAfter = h.lines.filter((l) => l.ev === 'start' && l.job === 'catchup-1s' && l.t > to);
    const abortedByLease = h.lines.filter((l) => l.ev === 'end' && l.outcome === 'aborted' && l.reason === 'lease-lost');
    const recoveredRuns = h.lines.filter((l) => l.ev === 'run:retry');
    const summary =
      `[${label}] outage (${outage.description}) ${to - from} ms: runs ${JSON.stringify(runsPerJob(h.lines))}; ` +
      `duplicates ${SHARED.reduce((n, job) => n + duplicates(h.lines, job).length, 0)}; ` +
      `errors during outage ${JSON.stringify(errors)} (${errorKinds.length} kinds: ${errorKinds.slice(0, 3).join(' | ')}); ` +
      `allow-1s: ${allowHoles.ran.length} ticks ran, ${allowHoles.explained.length} coalesced, ` +
      `${allowSilent.length} decided by a reply lost to the timeout, ${allowLost.length} lost; ` +
      `forbid-1s ticks decided by a lost reply ${forbidSilent.length}; ` +
      `first allow-1s start ${resumed.t - to} ms after the outage ended; ` +
      `handlers aborted with lease-lost ${abortedByLease.length}, runs recovered (run:retry) ${recoveredRuns.length}; ` +
      `max concurrent forbid ${forbid.maxConcurrent} catchup ${catchup.maxConcurrent}; catchup ticks ${order.order.length} ` +
      `(${order.outOfOrder.length} out of order, ${order.gaps.length} gaps, ${catchupAfter.length} started after the outage); ` +
      `handler starts after stop() ${startsAfterStop(h.lines).length}; ` +
      `handlers re-run after their success could not be recorded ${SHARED.reduce((n, job) => n + reexecutions(h.lines, job).length, 0)}`;
    console.log(summary);

    assertProcessesHealthy(h);
    for (const job of SHARED) assertNoDuplicates(h, job);
    if (outage.expectErrors) {
      for (const proc of h.procs) {
        expect(errors[`${proc.instance}/${proc.pid}`] ?? 0, `${label}: ${proc.instance} reported no error during the outage`).toBeGreaterThan(0);
      }
    }
    expect(
      allowLost.map(iso),
      `${label}: allow-1s ticks neither run nor coalesced (SPEC §6.5):\n${show(h.lines.filter((l) => l.job === 'allow-1s' && ['start', 'tick:missed'].includes(l.ev)))}`,
    ).toEqual([]);
    // After the outage every tick runs again.
    expect([...afterHoles.explained.map((x) => x.tick), ...afterHoles.unexplained].map(iso), `${label}: allow-1s not back to every tick`).toEqual([]);
    expect(forbidLost.map(iso), `${label}: forbid-1s ticks unaccounted for`).toEqual([]);
    expect(forbid.pairs.map(([x, y]) => `${x.runId}@${x.instance} & ${y.runId}@${y.instance}`), `${label}: forbid-1s overlap\n${showExec(forbidExecs)}`).toEqual([]);
    expect(catchup.pairs.map(([x, y]) => `${x.runId}@${x.instance} & ${y.runId}@${y.instance}`), `${label}: catchup-1s overlap\n${showExec(catchupExecs)}`).toEqual([]);
    expect(order.outOfOrder.map(iso), `${label}: catchup-1s out of order`).toEqual([]);
    expect(order.gaps.map(iso), `${label}: catchup-1s ticks lost`).toEqual([]);
    // CatchUp keeps working its backlog off after the outage (1.2 s handler per 1 s tick: it never catches up).
    expect(catchupAfter.length, `${label}: catchup-1s did not resume`).toBeGreaterThanOrEqual(3);
    passed = true;
    return summary;
  } finally {
    await h.killAll();
    if (!passed || process.env.TW_MP_KEEP_LOGS !== undefined) console.log(`[${label}] merged log: ${h.save(label)}`);
  }
}

/**
 * SPEC §5a with real processes: the one run of `fan-out` (12 indices of 1.5 s, at
 * most 4 at once) over three processes; the first process to start an index is
 * SIGKILLed mid-index. Every index must succeed exactly once (the killed ones
 * retried by a survivor once their lease expires), the run must succeed once, and
 * never more than 4 indices may run at once.
 */
export async function fanOutScenario(label: string, config: WorkerConfig): Promise<string> {
  const h = new Harness(config);
  let passed = false;
  try {
    const leaseMs = config.leaseMs ?? 2000;
    const env = { TW_FANOUT_AT: String(Date.now() + 8_000) };
    const procs = ['a', 'b', 'c'].map((instance) => h.spawn({ instance, jobs: ['fan-out'], env }));
    await Promise.all(procs.map((proc) => h.waitFor(`${proc.instance} ready`, (l) => l.ev === 'ready' && l.pid === proc.pid, 20_000)));
    const first = await h.waitFor('a fan-out index starting', (l) => l.ev === 'start' && l.job === 'fan-out', 30_000);
    await sleep(300);
    const victim = procs.find((proc) => proc.pid === first.pid)!;
    const killT = await h.kill(victim);
    const done = await h.waitFor('fan-out run succeeded', (l) => l.ev === 'run:succeeded' && l.job === 'fan-out', 60_000);
    await sleep(1_000); // a second success, if there were one, would show up here
    await h.stopAll();

    const starts = h.lines.filter((l) => l.ev === 'start' && l.job === 'fan-out');
    const ends = h.lines.filter((l) => l.ev === 'end' && l.job === 'fan-out');
    const succeededPerIndex = new Map<number, LogLine[]>();
    for (const end of ends.filter((l) => l.outcome === 'ok')) succeededPerIndex.set(end.index as number, [...(succeededPerIndex.get(end.index as number) ?? []), end]);
    const endOf = (start: LogLine): LogLine | undefined =>
      ends.find((end) => end.pid === start.pid && end.index === start.index && end.attempt === start.attempt);
    const killed = starts.filter((start) => start.pid === victim.pid && endOf(start) === undefined);
    const retriedBy = killed.map((k) => starts.find((s) => s.index === k.index && s.pid !== victim.pid && (s.attempt as number) > (k.attempt as number)));
    const recoveryMs = retriedBy.map((s) => (s === undefined ? undefined : s.t - killT));
    // Handlers running at once, from the log: each start until its end (or its process's kill).
    const points = starts.flatMap((start) => [
      { t: start.t, d: 1 },
      { t: endOf(start)?.t ?? (start.pid === victim.pid ? killT : Infinity), d: -1 },
    ]);
    points.sort((p, q) => p.t - q.t || p.d - q.d);
    let active = 0;
    let maxActive = 0;
    for (const point of points) maxActive = Math.max(maxActive, (active += point.d));
    const perProcess: Record<string, number> = {};
    for (const [, lines] of succeededPerIndex) for (const line of lines) perProcess[`${line.instance}/${line.pid}`] = (perProcess[`${line.instance}/${line.pid}`] ?? 0) + 1;
    const successes = h.lines.filter((l) => l.ev === 'run:succeeded' && l.job === 'fan-out');
    // The lost lease is noticed (the index goes back to waiting) before the index starts again: waiting indices
    // are taken in ready order, so never-started ones (ready since the run's creation) go first.
    const requeued = h.lines.find((l) => l.ev === 'run:retry' && l.job === 'fan-out' && l.t > killT);
    const summary =
      `[${label}] fan-out 12 × 1.5 s, parallelism 4, 3 processes, ${victim.instance} SIGKILLed mid-index: ` +
      `indices succeeded per process ${JSON.stringify(perProcess)}; handler starts ${starts.length}; max running at once ${maxActive}; ` +
      `killed indices ${killed.map((k) => `${String(k.index)}#${String(k.attempt)}`).join(', ')} retried by ${retriedBy.map((s) => s?.instance ?? 'nobody').join(', ')} ` +
      `(lease loss noticed after ${requeued === undefined ? '?' : requeued.t - killT} ms, leaseMs ${leaseMs}; restarted after ${recoveryMs.map((ms) => `${ms} ms`).join(', ')}); ` +
      `run succeeded ${successes.length}× at +${done.t - Number(env.TW_FANOUT_AT)} ms`;
    console.log(summary);

    assertProcessesHealthy(h);
    expect(
      Array.from({ length: 12 }, (_, index) => succeededPerIndex.get(index)?.length ?? 0),
      `${label}: successes per index:\n${show(starts.concat(ends))}`,
    ).toEqual(Array.from({ length: 12 }, () => 1));
    expect(killed.length, `${label}: the victim was not mid-index when killed`).toBeGreaterThan(0);
    expect(retriedBy.map((s) => s?.instance), `${label}: killed indices not retried by a survivor`).not.toContain(undefined);
    expect(requeued, `${label}: the lost index lease was never recovered`).toBeDefined();
    expect(requeued!.t - killT, 'recovered before the lease could have expired').toBeGreaterThanOrEqual(leaseMs / 3);
    expect(requeued!.t - killT, `${label}: recovery took too long`).toBeLessThan(leaseMs * 3 + 1_000);
    expect(maxActive, `${label}: more than 4 indices at once`).toBeLessThanOrEqual(4);
    expect(maxActive).toBe(4);
    expect(successes).toHaveLength(1);
    passed = true;
    return summary;
  } finally {
    await h.killAll();
    if (!passed || process.env.TW_MP_KEEP_LOGS !== undefined) console.log(`[${label}] merged log: ${h.save(label)}`);
  }
}
