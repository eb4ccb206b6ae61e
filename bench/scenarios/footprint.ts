/**
 * Footprint: what each library costs the app that installs it. tickwork is packed from its
 * build and installed from the tarball; each peer is installed from the registry at the
 * version the bench runs (the one in node_modules), each into its own empty project,
 * production dependencies only. Install size = every file of that node_modules. The minimal
 * app (one job, started and stopped) is bundled with esbuild for the in-process schedulers;
 * BullMQ and pg-boss are queue clients whose minimal app needs a server, so they have no
 * bundle figure.
 */
import { readFileSync } from 'node:fs';
import { ROOT } from '../lib/child.js';
import { bundle, install, MINIMAL_APPS, pack, remove, tempDir, type Bundle } from '../lib/footprint.js';
import { report } from '../lib/stats.js';

const PEERS = ['croner', 'node-cron', 'bullmq', 'pg-boss'] as const;

function versionAt(dir: string): string {
  return (JSON.parse(readFileSync(`${dir}package.json`, 'utf8')) as { version: string }).version;
}

async function measure(lib: string, spec: string) {
  const installed = install(lib, [spec]);
  try {
    const app = (MINIMAL_APPS as Record<string, string>)[lib];
    const minimal: Bundle | undefined = app === undefined ? undefined : await bundle(installed.dir, lib, app);
    return { lib, installBytes: installed.bytes, packages: installed.packages, bundle: minimal };
  } finally {
    remove(installed.dir);
  }
}

async function main(): Promise<void> {
  const work = tempDir('footprint');
  try {
    const { bytes, unpackedBytes, byKind, file } = pack(ROOT, work);
    const libs: object[] = [{ ...(await measure('tickwork', file)), version: versionAt(ROOT), tarball: { bytes, unpackedBytes, byKind } }];
    for (const peer of PEERS) {
      const version = versionAt(`${ROOT}node_modules/${peer}/`);
      libs.push({ ...(await measure(peer, `${peer}@${version}`)), version });
    }
    report({ libs });
  } finally {
    remove(work);
  }
}

await main();
