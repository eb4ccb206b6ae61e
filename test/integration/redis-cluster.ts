/**
 * A throwaway local Redis Cluster for the integration tests: three masters on free
 * ports, no replicas, no persistence, all files in one temp directory. `stop()`
 * kills the processes and removes the directory; a run that crashed before it
 * could do so is cleaned up by the next `startCluster()` (its processes are found
 * through the pid file it left in its directory, and ended only when they still
 * run in that directory, as our redis-servers do).
 */
import { execFile, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtemp, readdir, readFile, readlink, rm, stat, writeFile } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);
const DIR_PREFIX = 'tickwork-redis-cluster-';
const MASTERS = 3;

export interface LocalCluster {
  readonly nodes: readonly { readonly host: string; readonly port: number }[];
  stop(): Promise<void>;
}

/** Whether the `redis-server` and `redis-cli` binaries are installed. */
export function clusterBinariesAvailable(): boolean {
  return ['redis-server', 'redis-cli'].every((bin) => spawnSync(bin, ['--version'], { stdio: 'ignore' }).status === 0);
}

function portFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

/** Ports whose cluster bus port (port + 10000) is free too. */
async function freePorts(count: number): Promise<number[]> {
  const ports: number[] = [];
  for (let attempt = 0; ports.length < count && attempt < 200; attempt += 1) {
    const port = 20_000 + Math.floor(Math.random() * 20_000);
    if (ports.includes(port) || ports.includes(port + 10_000)) continue;
    if ((await portFree(port)) && (await portFree(port + 10_000))) ports.push(port);
  }
  if (ports.length < count) throw new Error('no free ports for a local Redis Cluster');
  return ports;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Whether `pid` is still one of our redis-servers: each runs with `--dir` set to its cluster's directory. */
async function servesFrom(pid: number, dir: string): Promise<boolean> {
  try {
    return (await readlink(`/proc/${pid}/cwd`)) === dir;
  } catch {
    return false;
  }
}

/** Ends the processes of earlier runs that died before `stop()`, and removes their directories. */
async function cleanLeftovers(): Promise<void> {
  const tmp = os.tmpdir();
  for (const entry of await readdir(tmp)) {
    if (!entry.startsWith(DIR_PREFIX)) continue;
    const dir = path.join(tmp, entry);
    let owner: number | undefined;
    let pids: number[] = [];
    try {
      const recorded = JSON.parse(await readFile(path.join(dir, 'pids.json'), 'utf8')) as { owner: number; pids: number[] };
      owner = recorded.owner;
      pids = recorded.pids;
    } catch {
      // No pid file: a run that died while starting (or one starting right now: leave young directories alone).
      const age = Date.now() - (await stat(dir).catch(() => ({ mtimeMs: Date.now() }))).mtimeMs;
      if (age < 60_000) continue;
    }
    if (owner !== undefined && alive(owner)) continue; // a live test process (maybe this one) owns it
    for (const pid of pids) {
      if (alive(pid) && (await servesFrom(pid, dir))) process.kill(pid, 'SIGKILL');
    }
    await rm(dir, { recursive: true, force: true });
  }
}

async function ping(port: number): Promise<boolean> {
  try {
    const { stdout } = await run('redis-cli', ['-h', '127.0.0.1', '-p', String(port), 'ping'], { timeout: 2_000 });
    return stdout.trim() === 'PONG';
  } catch {
    return false;
  }
}

async function clusterOk(port: number): Promise<boolean> {
  try {
    const { stdout } = await run('redis-cli', ['-h', '127.0.0.1', '-p', String(port), 'cluster', 'info'], { timeout: 2_000 });
    return stdout.includes('cluster_state:ok');
  } catch {
    return false;
  }
}

async function until(what: string, deadline: number, check: () => Promise<boolean>): Promise<void> {
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`local Redis Cluster: timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

function exited(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => child.once('exit', () => resolve()));
}

/** Starts three cluster masters and forms the cluster; resolves once `cluster_state:ok` on every node. */
export async function startCluster(timeoutMs = 30_000): Promise<LocalCluster> {
  const deadline = Date.now() + timeoutMs;
  await cleanLeftovers();
  const dir = await mkdtemp(path.join(os.tmpdir(), DIR_PREFIX));
  await writeFile(path.join(dir, 'pids.json'), JSON.stringify({ owner: process.pid, pids: [] }));
  const ports = await freePorts(MASTERS);
  const children: ChildProcess[] = [];
  const killAll = (): void => {
    for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  };
  process.once('exit', killAll);

  const stop = async (): Promise<void> => {
    process.off('exit', killAll);
    for (const child of children) child.kill('SIGTERM');
    const timer = setTimeout(killAll, 3_000);
    await Promise.all(children.map(exited));
    clearTimeout(timer);
    await rm(dir, { recursive: true, force: true });
  };

  try {
    for (const port of ports) {
      const child = spawn(
        'redis-server',
        [
          '--port', String(port),
          '--bind', '127.0.0.1',
          '--cluster-enabled', 'yes',
          '--cluster-config-file', path.join(dir, `nodes-${port}.conf`),
          '--dir', dir,
          '--save', '',
          '--appendonly', 'no',
          '--daemonize', 'no',
          '--logfile', path.join(dir, `redis-${port}.log`),
        ],
        { stdio: 'ignore' },
      );
      child.on('error', () => {});
      children.push(child);
    }
    const pids = children.map((child) => child.pid).filter((pid): pid is number => pid !== undefined);
    await writeFile(path.join(dir, 'pids.json'), JSON.stringify({ owner: process.pid, pids }));
    for (const port of ports) await until(`redis-server on port ${port}`, deadline, () => ping(port));
    await run(
      'redis-cli',
      ['--cluster', 'create', ...ports.map((port) => `127.0.0.1:${port}`), '--cluster-replicas', '0', '--cluster-yes'],
      { timeout: Math.max(1_000, deadline - Date.now()) },
    );
    for (const port of ports) await until(`cluster_state:ok on port ${port}`, deadline, () => clusterOk(port));
  } catch (error) {
    await stop();
    throw error;
  }
  return { nodes: ports.map((port) => ({ host: '127.0.0.1', port })), stop };
}
