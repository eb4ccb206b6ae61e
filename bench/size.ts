/**
 * `npm run size [-- --json] [-- --root <dir>]`: what tickwork costs the app that installs it,
 * and the budget CI holds it to. Packs the built package (run `npm run build` first),
 * installs the tarball into an empty project (production dependencies only; they come from
 * npm's cache or the registry, as in `npm install`), bundles the minimal app from it with
 * esbuild (minified, node platform), runs the bundle once, and fails if
 *   - the bundled minimal app, luxon aside (BUDGET_EXEMPT says why), is over BUNDLE_BUDGET_BYTES, or
 *   - a declaration file has a hashed chunk name (go-to-definition would land in
 *     `store-DsE23yg9.d.ts`: every .d.ts must be named after its entry or module).
 * `--root` measures another built checkout (a before/after); `--json` prints the figures as JSON.
 * The peers' figures are the bench's `footprint` scenario (bench/RESULTS.md), which downloads them.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from './lib/child.js';
import { budgeted, BUDGET_EXEMPT, BUNDLE_BUDGET_BYTES, BUNDLE_TARGET_BYTES, bundle, install, MINIMAL_APPS, pack, remove, tempDir, type PackageSize } from './lib/footprint.js';

/**
 * A rollup chunk hash after a hyphen (`store-DsE23yg9.d.ts`): 8 base64url characters with an
 * upper-case letter, a digit or an underscore, which kebab-case module names never have.
 */
function hashedChunk(path: string): boolean {
  const hash = /-([\w-]{8})\.d\.c?ts$/.exec(path)?.[1];
  return hash !== undefined && /[A-Z0-9_]/.test(hash);
}

const argv = process.argv.slice(2);
const rootIndex = argv.indexOf('--root');
const root = rootIndex >= 0 ? (argv[rootIndex + 1] as string) : ROOT;

const kb = (bytes: number): string => `${(bytes / 1024).toLocaleString('en-US', { maximumFractionDigits: 1 })} KB`;
const mb = (bytes: number): string => `${(bytes / 2 ** 20).toLocaleString('en-US', { maximumFractionDigits: 2 })} MB`;
const list = (sizes: PackageSize[], n: number): string => sizes.slice(0, n).map((p) => `${p.name} ${kb(p.bytes)}`).join(', ');

async function main(): Promise<void> {
  if (!existsSync(join(root, 'dist', 'index.js'))) throw new Error(`${join(root, 'dist')} is missing: run \`npm run build\` first`);
  const work = tempDir('size');
  try {
    const packed = pack(root, work);
    const installed = install('size', [packed.file]);
    try {
      const app = await bundle(installed.dir, 'minimal', MINIMAL_APPS.tickwork);
      const hashed = packed.paths.filter(hashedChunk);
      const counted = budgeted(app);
      const figures = { tarball: packed, install: { bytes: installed.bytes, packages: installed.packages }, bundle: app, budgetedBytes: counted, budgetBytes: BUNDLE_BUDGET_BYTES, targetBytes: BUNDLE_TARGET_BYTES, hashedDeclarations: hashed };
      if (argv.includes('--json')) process.stdout.write(`${JSON.stringify(figures, null, 1)}\n`);
      else {
        const kinds = Object.entries(packed.byKind).map(([kind, bytes]) => `${kind} ${kb(bytes)}`).join(', ');
        process.stdout.write(
          [
            `tarball              ${kb(packed.bytes)} packed, ${kb(packed.unpackedBytes)} unpacked (${kinds})`,
            `install              ${mb(installed.bytes)} of node_modules: ${list(installed.packages, 6)}`,
            `minimal app bundled  ${kb(app.bytes)} minified, ${kb(app.gzipBytes)} gzipped; without ${BUDGET_EXEMPT.join(', ')} ${kb(counted)}, budget ${kb(BUNDLE_BUDGET_BYTES)} (issue 19's target ${kb(BUNDLE_TARGET_BYTES)}: ${counted <= BUNDLE_TARGET_BYTES ? 'met' : 'not met'})`,
            `  by package         ${list(app.packages, 8)}`,
            `  largest inputs     ${list(app.largestInputs, 6)}`,
            '',
          ].join('\n'),
        );
      }
      const failures: string[] = [];
      if (counted > BUNDLE_BUDGET_BYTES) failures.push(`the bundled minimal app is ${kb(counted)} without ${BUDGET_EXEMPT.join(', ')}, over its budget of ${kb(BUNDLE_BUDGET_BYTES)}`);
      if (hashed.length > 0) failures.push(`declaration files with hashed chunk names: ${hashed.join(', ')}`);
      if (failures.length > 0) {
        process.stderr.write(`npm run size: ${failures.join('; ')}\n`);
        process.exitCode = 1;
      }
    } finally {
      remove(installed.dir);
    }
  } finally {
    remove(work);
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`${String((error as Error)?.stack ?? error)}\n`);
  process.exit(1);
});
