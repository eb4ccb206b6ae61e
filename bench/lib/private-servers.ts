/**
 * The scale scenarios' own Redis and Postgres: servers started for the run on free
 * ports (the multi-process suites' throwaway servers) and removed after it. A million
 * jobs' worth of scripts would hold the shared Redis for seconds at a time, and the
 * shared servers' CPU counts every other session's work; a private server's CPU is
 * the scenario's alone. Its CPU is read in any process from the URL: Redis `INFO
 * cpu`; Postgres its postmaster and every child of it in /proc (the CPU of exited
 * backends included, which the postmaster reaps).
 */
import { readdirSync, readFileSync } from 'node:fs';
import pg from 'pg';
import { Redis } from 'ioredis';
import { postgresBinaries, throwawayPostgres, throwawayRedis, type ThrowawayServer } from '../../test/multi-process/throwaway-servers.js';
import type { StoreKind } from './store.js';

const TICK_MS = 10; // USER_HZ is 100 on Linux

export interface PrivateServers {
  readonly redis: string;
  readonly postgres: string;
  dispose(): Promise<void>;
}

export async function startPrivateServers(): Promise<PrivateServers> {
  const bin = postgresBinaries();
  if (bin === undefined) throw new Error('no Postgres server binaries (/usr/lib/postgresql/*/bin) for the private server');
  const servers: ThrowawayServer[] = [await throwawayRedis(), await throwawayPostgres(bin)];
  try {
    for (const server of servers) await server.up();
  } catch (error) {
    await Promise.all(servers.map((server) => server.dispose()));
    throw error;
  }
  const [redis, postgres] = servers as [ThrowawayServer, ThrowawayServer];
  return { redis: redis.url, postgres: postgres.url, dispose: async () => void (await Promise.all(servers.map((s) => s.dispose()))) };
}

interface ProcStat {
  readonly ppid: number;
  /** utime + stime + cutime + cstime, ms. */
  readonly cpuMs: number;
}

function procStats(): Map<number, ProcStat> {
  const stats = new Map<number, ProcStat>();
  for (const pid of readdirSync('/proc')) {
    if (!/^\d+$/.test(pid)) continue;
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      // fields[0] is state (field 3), ppid field 4; utime, stime, cutime, cstime are fields 14-17.
      const ticks = Number(fields[11]) + Number(fields[12]) + Number(fields[13]) + Number(fields[14]);
      stats.set(Number(pid), { ppid: Number(fields[1]), cpuMs: ticks * TICK_MS });
    } catch {
      /* the process exited */
    }
  }
  return stats;
}

/** CPU (ms, cumulative) of a process and its children, exited ones included. */
function treeCpuMs(root: number): number {
  const stats = procStats();
  let total = stats.get(root)?.cpuMs ?? NaN;
  for (const stat of stats.values()) if (stat.ppid === root) total += stat.cpuMs;
  return total;
}

/** Reads the CPU (ms, cumulative) of the server behind `url`; undefined for the memory store. `close` ends its connection, if it keeps one. */
export async function serverCpu(kind: StoreKind, url: string): Promise<((() => Promise<number>) & { close?: () => void }) | undefined> {
  if (kind === 'redis') {
    const client = new Redis(url);
    const read = async () => {
      const info = await client.info('cpu');
      const field = (name: string): number => Number(new RegExp(`${name}:([\\d.]+)`).exec(info)?.[1] ?? NaN);
      return (field('used_cpu_sys') + field('used_cpu_user')) * 1000;
    };
    return Object.assign(read, { close: () => client.disconnect() });
  }
  if (kind === 'postgres') {
    // The checkpointer is a child of the postmaster: its parent is the server's root process.
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    const { rows } = await client.query<{ pid: number }>("SELECT pid FROM pg_stat_activity WHERE backend_type = 'checkpointer'");
    await client.end();
    const checkpointer = rows[0]?.pid;
    if (checkpointer === undefined) throw new Error(`no checkpointer in ${url}`);
    const postmaster = procStats().get(checkpointer)?.ppid;
    if (postmaster === undefined) throw new Error(`cannot read /proc/${checkpointer}/stat`);
    return async () => treeCpuMs(postmaster);
  }
  return undefined;
}
