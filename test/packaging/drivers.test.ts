/**
 * The built package (dist/) as an app installs it, in a temp directory whose
 * node_modules has tickwork and its dependencies but none of the optional drivers
 * (ioredis, pg, @opentelemetry/api): importing every entry point succeeds, ESM and
 * CommonJS; constructing what needs a missing driver throws DRIVER_MISSING naming
 * it and its install command; esbuild bundles such an app, and the bundle behaves
 * the same. With a driver installed, the same code loads it. It tests dist/ as
 * `npm run build` left it (CI builds first), and builds it only when it is missing.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { cp, mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { build } from 'esbuild';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const run = promisify(execFile);
const ROOT = path.resolve(import.meta.dirname, '../..');

/** Exercises every driver; prints one JSON line. The same text serves as ESM and (with require) CommonJS. */
const APP_BODY = `
const outcome = (make) => {
  try { make(); return 'constructed'; }
  catch (error) { return { instance: error instanceof TickworkError, code: error.code, message: error.message }; }
};
console.log(JSON.stringify({
  entries: [typeof Scheduler, typeof RedisStore, typeof PostgresStore, typeof MemoryStore, typeof FakeClock],
  redis: outcome(() => new RedisStore({ url: 'redis://127.0.0.1:1' })),
  postgres: outcome(() => new PostgresStore({ connectionString: 'postgres://nobody@127.0.0.1:1/none' })),
  postgresPool: outcome(() => new PostgresStore({ pool: { query: async () => ({ rows: [] }) } })),
  telemetry: outcome(() => new Scheduler({ telemetry: true })),
}));
`;
const ESM_APP = `import { Scheduler, TickworkError } from 'tickwork';
import { RedisStore } from 'tickwork/redis';
import { PostgresStore } from 'tickwork/postgres';
import { MemoryStore } from 'tickwork/memory';
import { FakeClock } from 'tickwork/testing';
${APP_BODY}`;
const CJS_APP = `const { Scheduler, TickworkError } = require('tickwork');
const { RedisStore } = require('tickwork/redis');
const { PostgresStore } = require('tickwork/postgres');
const { MemoryStore } = require('tickwork/memory');
const { FakeClock } = require('tickwork/testing');
${APP_BODY}`;

const missing = (pkg: string, what: string) => ({
  instance: true,
  code: 'DRIVER_MISSING',
  message: `${what} needs the "${pkg}" package, which is not installed. Install it with: npm install ${pkg}`,
});
const WITHOUT_DRIVERS = {
  entries: ['function', 'function', 'function', 'function', 'function'],
  redis: missing('ioredis', 'RedisStore'),
  postgres: missing('pg', 'PostgresStore with a connectionString'),
  postgresPool: 'constructed',
  telemetry: missing('@opentelemetry/api', 'the telemetry option'),
};

/** One triggered run with `telemetry` on, traced by a stub tracer provider; prints the span names, or the error. */
const TELEMETRY_BODY = `
const spans = [];
const span = { end() {}, recordException() {}, setStatus() {}, isRecording: () => true, spanContext: () => ({ traceId: '0'.repeat(32), spanId: '0'.repeat(16), traceFlags: 0 }) };
const tracerProvider = { getTracer: () => ({ startSpan: (name) => (spans.push(name), span) }) };
(async () => {
  try {
    const scheduler = new Scheduler({ telemetry: { tracerProvider } });
    scheduler.register({ name: 'traced', schedule: '0 0 1 1 *', handler: () => {} });
    const done = new Promise((resolve) => scheduler.on('run:succeeded', resolve));
    await scheduler.start();
    await scheduler.trigger('traced');
    await done;
    await scheduler.stop();
    console.log(JSON.stringify(spans));
  } catch (error) {
    console.log(JSON.stringify({ code: error.code, message: error.message }));
  }
})();
`;

let dir: string;

/** An app directory: node_modules/tickwork is a copy of the package; its dependencies are linked. */
async function appDir(drivers: readonly string[]): Promise<string> {
  const app = await mkdtemp(path.join(dir, 'app-'));
  const modules = path.join(app, 'node_modules');
  await mkdir(path.join(modules, 'tickwork'), { recursive: true });
  const manifest = JSON.parse(await readFile(path.join(ROOT, 'package.json'), 'utf8')) as { dependencies: Record<string, string> };
  await cp(path.join(ROOT, 'dist'), path.join(modules, 'tickwork', 'dist'), { recursive: true });
  await cp(path.join(ROOT, 'package.json'), path.join(modules, 'tickwork', 'package.json'));
  for (const name of [...Object.keys(manifest.dependencies), ...drivers]) {
    await mkdir(path.dirname(path.join(modules, name)), { recursive: true });
    await symlink(path.join(ROOT, 'node_modules', name), path.join(modules, name), 'dir');
  }
  await writeFile(path.join(app, 'app.mjs'), ESM_APP);
  await writeFile(path.join(app, 'app.cjs'), CJS_APP);
  return app;
}

async function runApp(file: string): Promise<unknown> {
  const { stdout } = await run(process.execPath, [file], { cwd: path.dirname(file), timeout: 20_000 });
  return JSON.parse(stdout.trim()) as unknown;
}

beforeAll(async () => {
  if (!existsSync(path.join(ROOT, 'dist', 'index.js'))) await run('npm', ['run', 'build'], { cwd: ROOT, timeout: 120_000 });
  dir = await mkdtemp(path.join(os.tmpdir(), 'tickwork-drivers-'));
}, 150_000);

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('the built package without its optional drivers', () => {
  it('imports every entry point (ESM and CommonJS) and throws DRIVER_MISSING only where a driver is needed', async () => {
    const app = await appDir([]);
    expect(existsSync(path.join(app, 'node_modules', 'ioredis'))).toBe(false);
    expect(await runApp(path.join(app, 'app.mjs'))).toEqual(WITHOUT_DRIVERS);
    expect(await runApp(path.join(app, 'app.cjs'))).toEqual(WITHOUT_DRIVERS);
  });

  it('is bundled by esbuild (ESM and CommonJS output), and the bundle reports the missing drivers the same way', async () => {
    const app = await appDir([]);
    for (const [entry, format, out] of [['app.mjs', 'esm', 'bundle.mjs'], ['app.cjs', 'cjs', 'bundle.cjs']] as const) {
      const result = await build({ entryPoints: [path.join(app, entry)], bundle: true, platform: 'node', format, outfile: path.join(app, out), logLevel: 'silent' });
      expect(result.errors).toEqual([]);
      expect(await runApp(path.join(app, out))).toEqual(WITHOUT_DRIVERS);
    }
  });

  it('loads a driver that is installed, from the package and from a bundle', async () => {
    const app = await appDir(['ioredis', 'pg', '@opentelemetry/api']);
    const expected = { ...WITHOUT_DRIVERS, redis: 'constructed', postgres: 'constructed', telemetry: 'constructed' };
    expect(await runApp(path.join(app, 'app.mjs'))).toEqual(expected);
    expect(await runApp(path.join(app, 'app.cjs'))).toEqual(expected);
    await build({ entryPoints: [path.join(app, 'app.mjs')], bundle: true, platform: 'node', format: 'esm', outfile: path.join(app, 'bundle.mjs'), logLevel: 'silent' });
    expect(await runApp(path.join(app, 'bundle.mjs'))).toEqual(expected);
  });

  it('declares the core without @opentelemetry/api: an app without it type-checks against tickwork', async () => {
    for (const file of ['index.d.ts', 'types.d.ts', 'testing.d.ts', 'telemetry.d.ts']) {
      expect(await readFile(path.join(ROOT, 'dist', file), 'utf8')).not.toMatch(/(from|import) '@opentelemetry\/api'/);
    }
  });

  it('instruments runs with the tickwork/telemetry entry it loads by name, and a bundle run elsewhere with the entry it imports', async () => {
    const app = await appDir(['@opentelemetry/api']);
    await writeFile(path.join(app, 'traced.mjs'), `import { Scheduler } from 'tickwork';\n${TELEMETRY_BODY}`);
    await writeFile(path.join(app, 'traced.cjs'), `const { Scheduler } = require('tickwork');\n${TELEMETRY_BODY}`);
    await writeFile(path.join(app, 'traced-import.mjs'), `import 'tickwork/telemetry';\nimport { Scheduler } from 'tickwork';\n${TELEMETRY_BODY}`);
    expect(await runApp(path.join(app, 'traced.mjs'))).toEqual(['tickwork.run']);
    expect(await runApp(path.join(app, 'traced.cjs'))).toEqual(['tickwork.run']);
    // Bundled, run where node_modules has @opentelemetry/api (loaded at run time) but not tickwork.
    const elsewhere = await mkdtemp(path.join(dir, 'elsewhere-'));
    await mkdir(path.join(elsewhere, 'node_modules', '@opentelemetry'), { recursive: true });
    await symlink(path.join(ROOT, 'node_modules', '@opentelemetry', 'api'), path.join(elsewhere, 'node_modules', '@opentelemetry', 'api'), 'dir');
    for (const name of ['traced.mjs', 'traced-import.mjs']) {
      const bundled = name.replace('.mjs', '.bundle.mjs');
      await build({ entryPoints: [path.join(app, name)], bundle: true, platform: 'node', format: 'esm', outfile: path.join(app, bundled), logLevel: 'silent' });
      await cp(path.join(app, bundled), path.join(elsewhere, bundled));
    }
    expect(await runApp(path.join(app, 'traced.bundle.mjs'))).toEqual(['tickwork.run']);
    expect(await runApp(path.join(elsewhere, 'traced.bundle.mjs'))).toEqual({
      code: 'DRIVER_MISSING',
      message: "the telemetry option needs the \"tickwork/telemetry\" module, which could not be loaded: an app bundled to run without tickwork in its node_modules imports it (import 'tickwork/telemetry')",
    });
    expect(await runApp(path.join(elsewhere, 'traced-import.bundle.mjs'))).toEqual(['tickwork.run']);
    // Next to another version's entry (one that registers under another key), the bundle does not take it.
    await mkdir(path.join(elsewhere, 'node_modules', 'tickwork', 'dist'), { recursive: true });
    await writeFile(path.join(elsewhere, 'node_modules', 'tickwork', 'package.json'), JSON.stringify({ name: 'tickwork', exports: { './telemetry': './dist/telemetry.cjs' } }));
    await writeFile(path.join(elsewhere, 'node_modules', 'tickwork', 'dist', 'telemetry.cjs'), "globalThis[Symbol.for('tickwork.telemetry.v0')] = () => { throw new Error('wrong version'); };");
    expect(await runApp(path.join(elsewhere, 'traced.bundle.mjs'))).toEqual({
      code: 'DRIVER_MISSING',
      message: "the telemetry option needs the \"tickwork/telemetry\" module of this tickwork version, and node_modules has another: an app bundled to run without tickwork in its node_modules imports it (import 'tickwork/telemetry')",
    });
    expect(await runApp(path.join(elsewhere, 'traced-import.bundle.mjs'))).toEqual(['tickwork.run']);
  });
});
