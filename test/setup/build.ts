/**
 * vitest globalSetup: builds dist/ (`npm run build`) before any test file runs when it is
 * missing or older than the sources, so that the suites that spawn the built `tickwork` bin
 * test what ships, and no test file rebuilds dist/ while another reads it.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';

const ROOT = path.resolve(import.meta.dirname, '../..');
const BUILT = path.join(ROOT, 'dist', 'cli.js');

function newestSource(): number {
  let newest = 0;
  const visit = (entry: string): void => {
    const stat = statSync(entry);
    if (stat.isDirectory()) for (const name of readdirSync(entry)) visit(path.join(entry, name));
    else newest = Math.max(newest, stat.mtimeMs);
  };
  for (const entry of ['src', 'adapters', 'cli', 'package.json', 'tsup.config.ts']) visit(path.join(ROOT, entry));
  return newest;
}

export default function setup(): void {
  if (existsSync(BUILT) && statSync(BUILT).mtimeMs >= newestSource()) return;
  process.stderr.write('[tickwork] dist/ is missing or older than the sources: npm run build\n');
  execFileSync('npm', ['run', 'build'], { cwd: ROOT, stdio: ['ignore', 'ignore', 'inherit'], timeout: 300_000 });
}
