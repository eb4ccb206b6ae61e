/**
 * Runs a scenario file in its own Node process and collects its `@@RESULT` line(s).
 * The scenario runs as JavaScript bundled by esbuild (its npm packages left as imports),
 * not through the tsx loader: that loader runs in a thread of its own with its own heap,
 * and its memory reducer's GCs (20-40 ms with their concurrent marking, some 8 s after it
 * last compiled) landed in whichever library's CPU window came next (`--trace-gc` and
 * `perf`, 2026-11-28), so a library measured soon after its start paid for the loader.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, rmSync } from 'node:fs';
import { basename } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildSync } from 'esbuild';

export const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/**
 * Bundles are written one level under bench/, as the sources are, so `import.meta.url`
 * resolves `../..` to the root in both; named by this process, removed when it exits.
 */
const BUNDLES = `${ROOT}bench/.build-${process.pid}`;
const bundles = new Map<string, string>();

function bundle(file: string): string {
  let out = bundles.get(file);
  if (out === undefined) {
    out = `${BUNDLES}/${basename(file).replace(/\.ts$/, '')}.mjs`;
    if (bundles.size === 0) {
      mkdirSync(BUNDLES, { recursive: true });
      process.on('exit', () => rmSync(BUNDLES, { recursive: true, force: true }));
    }
    buildSync({ entryPoints: [`${ROOT}${file}`], outfile: out, bundle: true, packages: 'external', platform: 'node', format: 'esm', target: 'node20', logLevel: 'error' });
    bundles.set(file, out);
  }
  return out;
}

export interface ChildOptions {
  args?: string[];
  env?: Record<string, string>;
  timeoutMs?: number;
  /** Extra node flags (e.g. --cpu-prof). */
  nodeFlags?: string[];
}

export function spawnScenario(file: string, options: ChildOptions = {}) {
  return spawn(process.execPath, ['--expose-gc', ...(options.nodeFlags ?? []), bundle(file), ...(options.args ?? [])], {
    cwd: ROOT,
    env: { ...process.env, ...options.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}

/** Runs the child to completion and returns every result it reported. */
export function runScenario<T = unknown>(file: string, options: ChildOptions = {}): Promise<T[]> {
  return new Promise((resolve, reject) => {
    const child = spawnScenario(file, options);
    const results: T[] = [];
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      stdout += chunk;
      let nl = stdout.indexOf('\n');
      while (nl >= 0) {
        const line = stdout.slice(0, nl);
        stdout = stdout.slice(nl + 1);
        if (line.startsWith('@@RESULT ')) results.push(JSON.parse(line.slice(9)) as T);
        else if (line.trim() !== '' && process.env.BENCH_VERBOSE) process.stderr.write(`  [child] ${line}\n`);
        nl = stdout.indexOf('\n');
      }
    });
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      stderr += chunk;
      if (process.env.BENCH_VERBOSE) process.stderr.write(chunk);
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 180_000);
    child.on('exit', (code, signal) => {
      clearTimeout(timer);
      if (code === 0 && results.length > 0) resolve(results);
      else reject(new Error(`${file} ${(options.args ?? []).join(' ')} exited ${code ?? signal}: ${stderr.slice(-2000)}`));
    });
  });
}
