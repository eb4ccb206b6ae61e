/**
 * Allocation per fire, in process: 100 jobs firing every second, memory store.
 * `--lib tickwork|croner|node-cron --seconds N`. V8's sampling heap profiler counts
 * every sampled allocation, including objects a GC has already collected, over N
 * seconds after a warm-up of `--warm-up` seconds: bytes per fire is what the
 * garbage collector has to deal with for each run, the cost behind much of the CPU
 * per fire. Measured apart from the fire-lag scenario, whose CPU and lag the
 * profiler would disturb.
 */
import type { HeapProfiler } from 'node:inspector';
import { Session } from 'node:inspector/promises';
import { startEverySecond } from '../lib/every-second.js';
import { arg, report, sleep } from '../lib/stats.js';

const lib = arg('lib', 'tickwork');
const seconds = Number(arg('seconds', '10'));
const warmUpSeconds = Number(arg('warm-up', '10'));
const JOBS = 100;
/** Bytes between samples: small enough for a few thousand samples per second of firing. */
const SAMPLING_INTERVAL = 128;

interface SamplingNode {
  readonly selfSize: number;
  readonly children: readonly SamplingNode[];
}

const sampledBytes = (node: SamplingNode): number => node.children.reduce((sum, child) => sum + sampledBytes(child), node.selfSize);

async function main(): Promise<void> {
  let fires = 0;
  const stop = await startEverySecond(lib, JOBS, () => {
    fires += 1;
  });
  if (stop === undefined) throw new Error(`unknown --lib ${lib}`);
  await sleep(warmUpSeconds * 1000);
  const session = new Session();
  session.connect();
  // includeObjectsCollectedBy*: count what was allocated, not only what is still alive at the end
  // (V8 has these flags; Node 20's typings do not list them yet).
  const sampling: HeapProfiler.StartSamplingParameterType & Record<`includeObjectsCollectedBy${'Major' | 'Minor'}GC`, boolean> = {
    samplingInterval: SAMPLING_INTERVAL,
    includeObjectsCollectedByMajorGC: true,
    includeObjectsCollectedByMinorGC: true,
  };
  await session.post('HeapProfiler.startSampling', sampling);
  const fires0 = fires;
  await sleep(seconds * 1000);
  const { profile } = (await session.post('HeapProfiler.stopSampling')) as { profile: { head: SamplingNode } };
  const firesSampled = fires - fires0;
  session.disconnect();
  await stop();
  report({ lib, jobs: JOBS, seconds, fires: firesSampled, bytesPerFire: sampledBytes(profile.head) / firesSampled });
  setTimeout(() => process.exit(0), 100).unref();
}

main().catch((error: unknown) => {
  process.stderr.write(`${String((error as Error)?.stack ?? error)}\n`);
  process.exit(1);
});
