/**
 * Servers of the test's own, on free ports, for scenarios that stop and start them:
 * the shared Redis (6379) and Postgres (5432) serve other suites and sessions and
 * are never touched. A Redis is a `redis-server` child with no persistence; a
 * Postgres is a cluster `initdb` creates in a temp directory, run as the `postgres`
 * user when the tests run as root (the server refuses root), stopped with
 * `pg_ctl stop` on that directory only.
 */
import { execFile, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chmod, chown, mkdtemp, rm } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { sleep } from './harness.js';

const run = promisify(execFile);

export interface ThrowawayServer {
  readonly port: number;
  readonly url: string;
  /** Starts the server and resolves once it accepts connections; returns that time (Date.now()). */
  up(): Promise<number>;
  /** Stops the server (if running) and resolves once it has exited. */
  down(): Promise<void>;
  /** Stops it and removes its files. */
  dispose(): Promise<void>;
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host: '127.0.0.1', port });
    const done = (ok: boolean): void => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(500, () => done(false));
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}

async function until(what: string, check: () => Promise<boolean>, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(20);
  }
}

function exited(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => child.once('exit', () => resolve()));
}

/** `available`, except that under CI a missing server binary fails the run instead of skipping the tests that need it. */
export function required(available: boolean, what: string): boolean {
  if (!available && process.env.CI) throw new Error(`${what} is not installed; CI requires it`);
  return available;
}

export function redisServerAvailable(): boolean {
  return spawnSync('redis-server', ['--version'], { stdio: 'ignore' }).status === 0;
}

export async function throwawayRedis(): Promise<ThrowawayServer> {
  const port = await freePort();
  const dir = await mkdtemp(path.join(os.tmpdir(), 'tickwork-redis-'));
  let child: ChildProcess | undefined;
  const down = async (): Promise<void> => {
    if (child === undefined) return;
    const stopping = child;
    child = undefined;
    stopping.kill('SIGKILL');
    await exited(stopping);
  };
  return {
    port,
    url: `redis://127.0.0.1:${port}`,
    async up() {
      child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir], { stdio: 'ignore' });
      await until(`redis-server on ${port}`, () => accepts(port));
      return Date.now();
    },
    down,
    async dispose() {
      await down();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** The directory of the Postgres server binaries (Debian layout), if any. */
export function postgresBinaries(): string | undefined {
  for (const candidate of ['/usr/lib/postgresql/17/bin', '/usr/lib/postgresql/16/bin', '/usr/lib/postgresql/15/bin', '/usr/lib/postgresql/14/bin']) {
    if (spawnSync(path.join(candidate, 'postgres'), ['--version'], { stdio: 'ignore' }).status === 0) return candidate;
  }
  return undefined;
}

export async function throwawayPostgres(bin: string): Promise<ThrowawayServer> {
  const port = await freePort();
  const dir = await mkdtemp(path.join(os.tmpdir(), 'tickwork-pg-'));
  const data = path.join(dir, 'data');
  // The server refuses to run as root: the files and the processes belong to the `postgres` user then.
  const asRoot = process.getuid?.() === 0;
  const command = (file: string, args: readonly string[]): [string, string[]] =>
    asRoot ? ['runuser', ['-u', 'postgres', '--', path.join(bin, file), ...args]] : [path.join(bin, file), [...args]];
  if (asRoot) {
    const { stdout } = await run('id', ['-u', 'postgres']);
    const { stdout: gid } = await run('id', ['-g', 'postgres']);
    await chown(dir, Number(stdout.trim()), Number(gid.trim()));
  }
  await chmod(dir, 0o700);
  await run(...command('initdb', ['-D', data, '-U', 'postgres', '--auth=trust', '--no-sync', '-E', 'UTF8']));
  let server: ChildProcess | undefined;
  const down = async (): Promise<void> => {
    if (server === undefined) return;
    const stopping = server;
    server = undefined;
    await run(...command('pg_ctl', ['-D', data, '-m', 'immediate', '-w', 'stop'])).catch(() => stopping.kill('SIGKILL'));
    await exited(stopping);
  };
  return {
    port,
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    async up() {
      const [file, args] = command('postgres', ['-D', data, '-p', String(port), '-k', dir, '-c', 'listen_addresses=127.0.0.1', '-c', 'fsync=off']);
      server = spawn(file, args, { stdio: 'ignore' });
      await until(`postgres on ${port}`, () => accepts(port));
      return Date.now();
    },
    down,
    async dispose() {
      await down();
      await rm(dir, { recursive: true, force: true });
    },
  };
}
