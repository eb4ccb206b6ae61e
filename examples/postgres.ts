/**
 * Several instances sharing one Postgres: run this file in two or three terminals at
 * once. Every tick runs exactly once across them; kill one (Ctrl-C) and the others
 * carry on, taking over planning within the lease. The store creates its schema and
 * tables on first use.
 *
 *   DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres npx tsx examples/postgres.ts
 */
import { Scheduler, systemClock } from '../src/index.js';
import { PostgresStore } from '../adapters/postgres/index.js';

const store = new PostgresStore({
  connectionString: process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres',
  schema: 'tickwork_example',
});
const scheduler = new Scheduler({ store, leaseMs: 5_000 });

scheduler.register({
  name: 'every-2s',
  schedule: '*/2 * * * * *',
  handler: ({ runId, scheduledAt }) =>
    console.log(`${scheduler.instanceId} ran ${runId} (lag ${Date.now() - scheduledAt.getTime()} ms)`),
});
scheduler.register({
  name: 'exclusive',
  schedule: '* * * * * *',
  concurrencyPolicy: 'Forbid', // never two at once across all instances
  handler: ({ runId, signal }) => {
    console.log(`${scheduler.instanceId} holds ${runId}`);
    return systemClock.sleep('2500ms', signal);
  },
});
scheduler.on('error', (error) => console.error(`error: ${error.message}`));

const stop = async (): Promise<void> => {
  await scheduler.stop({ abort: true }); // aborted runs are released to the other instances
  await store.close();
  process.exit(0);
};
process.once('SIGINT', () => void stop());
process.once('SIGTERM', () => void stop());

await scheduler.start();
console.log(`${scheduler.instanceId} started (planner: ${scheduler.isPlanner}); Ctrl-C to stop`);
await systemClock.sleep(Number(process.env.EXAMPLE_SECONDS ?? 3600) * 1000);
await stop();
