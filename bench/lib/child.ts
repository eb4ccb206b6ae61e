/** Runs a scenario file in its own Node process and collects its `@@RESULT` line(s). */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export const ROOT = fileURLToPath(new URL('../..', import.meta.url));

export interface ChildOptions {
  args?: string[];
  env?: Record<string, string>;
  timeoutMs?: number;
  /** Extra node flags (e.g. --cpu-prof). */
  nodeFlags?: string[];
}

export function spawnScenario(file: string, options: ChildOptions = {}) {
  return spawn(process.execPath, ['--expose-gc', ...(options.nodeFlags ?? []), '--import', 'tsx', file, ...(options.args ?? [])], {
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
