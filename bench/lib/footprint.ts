/**
 * What installing and bundling a package costs its users, measured the way they meet it:
 * the packed tarball (`npm pack`), the node_modules an `npm install` of it writes into an
 * empty project (production dependencies only), and a minimal app bundled from that
 * node_modules with esbuild (minified, node platform), with what the bundle is made of.
 * Shared by `npm run size` (tickwork alone, the CI budget) and the bench's `footprint`
 * scenario (tickwork next to its peers).
 */
import { execFileSync } from 'node:child_process';
import { lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { build } from 'esbuild';

/** Issue 19's target for tickwork's minimal app, bundled and minified, luxon aside (1 KB = 1,024 bytes). */
export const BUNDLE_TARGET_BYTES = 150 * 1024;

/**
 * The budget of tickwork's minimal app, bundled and minified (1 KB = 1,024 bytes), held by
 * `npm run size` in CI, so that the app does not grow back: issue 19's target. p-queue (5 KB
 * with p-timeout) and the 0.1.0 features of 2026-11-25 had taken it to 156 KB; validation that
 * carries only the zod parts it uses (its own English for the two issues zod words for it,
 * z.custom/transform checks instead of enum, literal, union-and-pipe, date, array, number
 * formats, regex and prefault: zod 31 -> 22 KB) brought it back to 148 KB. Sharded planning
 * (partition leases, 3.5 KB) and the plan loop's split took it to 155.6 KB the same day;
 * importing cron-parser's parser module rather than its index (which also loads its
 * crontab-file reader) to 153.2 KB, and it was 157,680 bytes (154 KB) on 2026-11-28. Then
 * telemetry left the core's imports (the `tickwork/telemetry` entry, loaded only when the
 * option is set: -3.2 KB net) and objects are parsed by tickwork's own parser rather than
 * zod's (-2.1 KB net): 151,889 bytes (148.3 KB), 1.7 KB under this budget.
 */
export const BUNDLE_BUDGET_BYTES = 150 * 1024;

/**
 * What the budget does not count: luxon, cron-parser's date library (70 KB, a third of the
 * bundle). cron-parser is CommonJS and calls luxon while it parses an expression, so no
 * bundler can leave it out, and cron-parser stays (the design card names it). Reported, not budgeted.
 */
export const BUDGET_EXEMPT: readonly string[] = ['luxon'];

/** The bytes of `bundle` the budget counts. */
export function budgeted(bundle: Bundle): number {
  return bundle.packages.reduce((bytes, p) => (BUDGET_EXEMPT.includes(p.name) ? bytes - p.bytes : bytes), bundle.bytes);
}

/**
 * The minimal app of each library, for the bundle figure: one job registered (tickwork: on
 * the memory store, its default), started and stopped, so the bundle runs and exits.
 */
export const MINIMAL_APPS = {
  tickwork: `import { Scheduler } from 'tickwork';
const scheduler = new Scheduler();
scheduler.register({ name: 'minimal', schedule: '*/5 * * * *', handler: () => {} });
await scheduler.start();
await scheduler.stop();
`,
  croner: `import { Cron } from 'croner';
new Cron('*/5 * * * *', () => {}).stop();
`,
  'node-cron': `import cron from 'node-cron';
await cron.schedule('*/5 * * * *', () => {}).destroy();
`,
} as const;

export interface Packed {
  /** Absolute path of the .tgz. */
  file: string;
  bytes: number;
  unpackedBytes: number;
  /** Unpacked bytes by kind of file: `js`, `d.ts`, `map`, `other`. */
  byKind: Record<string, number>;
  paths: string[];
}

export interface PackageSize {
  name: string;
  bytes: number;
}

export interface Installed {
  /** The probe project: its node_modules holds what was installed. */
  dir: string;
  /** Every file under node_modules, in bytes (apparent sizes, not disk blocks). */
  bytes: number;
  /** Largest first. */
  packages: PackageSize[];
}

export interface Bundle {
  /** The minified bundle, in bytes, and gzipped. */
  bytes: number;
  gzipBytes: number;
  /** Bytes of the bundle each package contributes (`(app)`: the app itself), largest first. */
  packages: PackageSize[];
  /** The largest input files, by bytes in the bundle. */
  largestInputs: PackageSize[];
}

/** A new temporary directory; the caller removes it (`remove`). */
export function tempDir(label: string): string {
  return mkdtempSync(join(tmpdir(), `tickwork-${label}-`));
}

/** `npm pack` of the package at `root` into `destination`. */
export function pack(root: string, destination: string): Packed {
  const out = execFileSync('npm', ['pack', '--json', '--pack-destination', destination], { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  const [info] = JSON.parse(out) as { filename: string; size: number; unpackedSize: number; files: { path: string; size: number }[] }[];
  if (info === undefined) throw new Error(`npm pack printed no result: ${out}`);
  const byKind: Record<string, number> = {};
  for (const { path, size } of info.files) {
    const kind = path.endsWith('.map') ? 'map' : /\.d\.c?ts$/.test(path) ? 'd.ts' : /\.c?js$/.test(path) ? 'js' : 'other';
    byKind[kind] = (byKind[kind] ?? 0) + size;
  }
  return { file: join(destination, info.filename), bytes: info.size, unpackedBytes: info.unpackedSize, byKind, paths: info.files.map((f) => f.path) };
}

/**
 * Installs `specs` (a tarball path or `name@version`) into a new empty project, as a user
 * would: production dependencies only, no install scripts. Needs the registry (or npm's
 * cache) for the dependencies.
 */
export function install(label: string, specs: string[]): Installed {
  const dir = tempDir(label);
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: `probe-${label}`, private: true, type: 'module' }));
  execFileSync('npm', ['install', '--omit=dev', '--ignore-scripts', '--no-audit', '--no-fund', '--no-package-lock', '--prefer-offline', ...specs], {
    cwd: dir,
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  const sizes = new Map<string, number>();
  const bytes = walk(join(dir, 'node_modules'), (path, size) => {
    const name = packageOf(path) ?? '(npm metadata)';
    sizes.set(name, (sizes.get(name) ?? 0) + size);
  });
  return { dir, bytes, packages: sorted(sizes) };
}

/**
 * Bundles `source` (an ES module) as the app of the project at `dir`, resolving its imports
 * from that project's node_modules, then runs the bundle once with node: a bundle that
 * tree-shaking broke fails here rather than in a user's app.
 */
export async function bundle(dir: string, label: string, source: string): Promise<Bundle> {
  const appDir = join(dir, 'app');
  mkdirSync(appDir, { recursive: true });
  const entry = join(appDir, `${label}.mjs`);
  const outfile = join(appDir, `${label}.bundle.mjs`);
  writeFileSync(entry, source);
  const result = await build({
    entryPoints: [entry],
    outfile,
    bundle: true,
    minify: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    metafile: true,
    logLevel: 'silent',
    absWorkingDir: dir,
  });
  execFileSync(process.execPath, [outfile], { cwd: appDir, stdio: ['ignore', 'ignore', 'pipe'], timeout: 30_000 });
  const output = Object.values(result.metafile.outputs)[0];
  if (output === undefined) throw new Error('esbuild wrote no output');
  const packages = new Map<string, number>();
  const inputs = new Map<string, number>();
  for (const [path, { bytesInOutput }] of Object.entries(output.inputs)) {
    const name = packageOf(path) ?? '(app)';
    packages.set(name, (packages.get(name) ?? 0) + bytesInOutput);
    inputs.set(path.replace(/^.*node_modules\//, ''), bytesInOutput);
  }
  const code = readFileSync(outfile);
  return { bytes: code.length, gzipBytes: gzipSync(code).length, packages: sorted(packages), largestInputs: sorted(inputs).slice(0, 10) };
}

export function remove(dir: string): void {
  rmSync(dir, { recursive: true, force: true });
}

/** The package a node_modules path belongs to (the innermost `node_modules/<name>`), or undefined outside one. */
function packageOf(path: string): string | undefined {
  const match = /.*node_modules\/((?:@[^/]+\/)?[^/.][^/]*)/.exec(path.replaceAll('\\', '/'));
  return match?.[1];
}

/** Sums the sizes of the regular files under `dir` (symbolic links, such as .bin, not followed). */
function walk(dir: string, onFile: (path: string, size: number) => void): number {
  let total = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) total += walk(path, onFile);
    else if (entry.isFile()) {
      const { size } = lstatSync(path);
      onFile(path, size);
      total += size;
    }
  }
  return total;
}

function sorted(sizes: Map<string, number>): PackageSize[] {
  return [...sizes].map(([name, bytes]) => ({ name, bytes })).sort((a, b) => b.bytes - a.bytes);
}
