/**
 * Sharded planning with real processes: three instances on a store of 8 partitions
 * share the partitions out and each plans the jobs of its own; one is SIGKILLed and
 * the survivors take its partitions over within `leaseMs`, with no tick missed and
 * none run twice.
 */
import { expect } from 'vitest';
import { partitionOf } from '../../src/partition.js';
import { duplicates, Harness, holes, iso, show, sleep, type LogLine, type WorkerConfig } from './harness.js';
import { holdings, partitionOverlaps, partitionsAt, sharedOut, takenOverAt } from './scenario.js';

const MANY = 24;
const JOBS = Array.from({ length: MANY }, (_, i) => `many-${i}`);

export async function shareScenario(label: string, config: WorkerConfig & { partitions: number }): Promise<string> {
  const h = new Harness(config);
  let passed = false;
  try {
    const leaseMs = config.leaseMs ?? 2000;
    const procs = ['a', 'b', 'c'].map((instance) => h.spawn({ instance, jobs: [], env: { TW_MANY: String(MANY) } }));
    await Promise.all(procs.map((proc) => h.waitFor(`${proc.instance} ready`, (l) => l.ev === 'ready' && l.pid === proc.pid, 20_000)));
    await sharedOut(h, label, config.partitions);
    const steadyFrom = Date.now();
    await sleep(7_000);
    const [, b] = procs as [(typeof procs)[0], (typeof procs)[0], (typeof procs)[0]];
    const before = holdings(h);
    const killT = await h.kill(b);
    const heldByB = partitionsAt(h.lines, b.pid, killT);
    const deadline = killT + leaseMs * 3;
    while (takenOverAt(h.lines, b.pid, heldByB, killT) === undefined && Date.now() < deadline) await sleep(50);
    await sleep(8_000);
    const stopT = Date.now();
    await h.stopAll();

    const takenOver = takenOverAt(h.lines, b.pid, heldByB, killT);
    const created = (pid: number): LogLine[] => h.lines.filter((l) => l.ev === 'run:created' && l.pid === pid && l.t >= steadyFrom && l.t <= killT);
    // Each run created by the planner of its job's partition at the time (give or take the 50 ms sampling).
    const heldWhen = (pid: number, partition: number, t: number): boolean =>
      [t - 100, t, t + 100].some((at) => partitionsAt(h.lines, pid, at).includes(partition));
    const wrongPlanner = procs.flatMap((proc) =>
      created(proc.pid)
        .filter((l) => !heldWhen(proc.pid, partitionOf(String(l.job), config.partitions), l.t))
        .map((l) => `${String(l.runId)} by ${proc.instance} at ${iso(l.t)}`),
    );
    const dups = JOBS.flatMap((job) => duplicates(h.lines, job));
    const gaps = JOBS.map((job) => holes(h.lines, job, steadyFrom + 3_000, stopT - 3_000, 3_000));
    const missed = h.lines.filter((l) => l.ev === 'tick:missed');
    const unexplained = gaps.flatMap((g, i) => g.unexplained.map((t) => `${JOBS[i]} ${iso(t)}`));
    const ran = gaps.reduce((n, g) => n + g.ran.length, 0);
    const summary =
      `[${label}] ${config.partitions} partitions, 3 processes, ${MANY} jobs every 3 s: partitions per process ` +
      `${procs.map((p) => `${p.instance} ${JSON.stringify(before.get(p.pid))}`).join(', ')}; runs created before the kill ` +
      `${procs.map((p) => `${p.instance} ${created(p.pid).length}`).join(', ')}; SIGKILL of b → its partitions ${heldByB.join(',')} ` +
      `taken over after ${takenOver === undefined ? '?' : takenOver - killT} ms (leaseMs ${leaseMs}); ticks ran ${ran}, ` +
      `missed ${missed.length + unexplained.length}, duplicates ${dups.length}; runs created by a planner not holding the job's partition ${wrongPlanner.length}`;
    console.log(summary);

    for (const proc of procs) expect(created(proc.pid).length, `${label}: ${proc.instance} planned nothing`).toBeGreaterThan(0);
    expect(wrongPlanner, `${label}: runs created outside the planner's partitions`).toEqual([]);
    expect(heldByB.length).toBeGreaterThan(0);
    expect(takenOver, `${label}: b's partitions ${heldByB.join(',')} never taken over\n${h.diagnostics()}`).toBeDefined();
    // Within leaseMs of the kill, plus the 50 ms sampling and the round trips of a list and an acquire (slow on this loaded 2-core box).
    expect(takenOver! - killT).toBeLessThan(leaseMs + 1_000);
    expect(dups.map((d) => `${iso(d.scheduledAt)}: ${d.why}`), `${label}: duplicates`).toEqual([]);
    expect(missed.map((l) => `${String(l.job)} ${iso(l.from)}..${iso(l.to)}`), `${label}: ticks missed`).toEqual([]);
    expect(unexplained, `${label}: ticks with no run:\n${show(h.lines.filter((l) => l.ev === 'partitions'))}`).toEqual([]);
    expect(partitionOverlaps(h.lines), `${label}: two planners of a partition at once`).toEqual([]);
    const fatal = h.lines.filter((l) => l.ev === 'fatal');
    expect(fatal, `fatal lines:\n${show(fatal)}`).toEqual([]);
    passed = true;
    return summary;
  } finally {
    await h.killAll();
    if (!passed || process.env.TW_MP_KEEP_LOGS !== undefined) console.log(`[${label}] merged log: ${h.save(label)}`);
  }
}
