/**
 * tickwork as its users run it: the built package (`npm run build` writes dist/, and
 * `npm run bench` builds first), imported by its own name as an application would.
 * Not the TypeScript source through the bench's loader: tsx compiles with `keepNames`,
 * which wraps every named function a hot path creates in a helper call (8 % of a fire's
 * profile; 15 % of its CPU in the fire-lag scenario, measured side by side). The peers
 * are measured from their published JavaScript; so is tickwork.
 *
 * The types come from the source, because the type check runs before any build: the
 * specifier is a `string`, so the compiler does not resolve it to dist/.
 */
import { pathToFileURL } from 'node:url';
import type * as Core from '../../src/index.js';
import type * as Testing from '../../src/testing/index.js';
import type * as Redis from '../../adapters/redis/index.js';
import type * as Postgres from '../../adapters/postgres/index.js';

interface Entries {
  tickwork: typeof Core;
  'tickwork/testing': typeof Testing;
  'tickwork/redis': typeof Redis;
  'tickwork/postgres': typeof Postgres;
}

/** dist/ files by entry, for a build elsewhere (`BENCH_TICKWORK_ROOT`). */
const FILES: Record<keyof Entries, string> = { tickwork: 'index.js', 'tickwork/testing': 'testing.js', 'tickwork/redis': 'redis.js', 'tickwork/postgres': 'postgres.js' };

/**
 * `BENCH_TICKWORK_ROOT=<dir>` loads the build in `<dir>/dist` instead (another commit's,
 * built there): how a scenario measures a change before and after in the same run.
 */
export async function load<E extends keyof Entries>(entry: E): Promise<Entries[E]> {
  const root = process.env.BENCH_TICKWORK_ROOT;
  const specifier: string = root === undefined || root === '' ? entry : pathToFileURL(`${root}/dist/${FILES[entry]}`).href;
  try {
    return (await import(specifier)) as Entries[E];
  } catch (error) {
    throw new Error(`cannot load ${entry} from dist/: run \`npm run build\` first (npm run bench does)`, { cause: error });
  }
}
