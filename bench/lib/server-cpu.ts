/** CPU used by the store servers: Redis via `INFO cpu`, Postgres via /proc/<pid>/stat of its processes. */
import { readdirSync, readFileSync } from 'node:fs';
import { Redis } from 'ioredis';
import { REDIS_URL } from './sysinfo.js';

export async function redisCpuMs(): Promise<number> {
  const client = new Redis(REDIS_URL);
  try {
    const info = await client.info('cpu');
    const sys = Number(/used_cpu_sys:([\d.]+)/.exec(info)?.[1] ?? NaN);
    const user = Number(/used_cpu_user:([\d.]+)/.exec(info)?.[1] ?? NaN);
    return (sys + user) * 1000;
  } finally {
    client.disconnect();
  }
}

const TICK_MS = 10; // USER_HZ is 100 on Linux

/**
 * CPU of every process whose command is postgres (the server and its backends): their
 * own (utime + stime) and that of their children that exited (cutime + cstime). A
 * backend that exits during a window leaves its CPU to the server's main process,
 * which reaps it, so the sum does not drop when a connection closes. NaN when /proc is
 * not readable.
 */
export function postgresCpuMs(): number {
  let total = 0;
  let found = 0;
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return NaN;
  }
  for (const pid of entries) {
    if (!/^\d+$/.test(pid)) continue;
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const close = stat.lastIndexOf(')');
      const comm = stat.slice(stat.indexOf('(') + 1, close);
      if (!comm.startsWith('postgres') && !comm.startsWith('postmaster')) continue;
      const fields = stat.slice(close + 2).split(' ');
      // fields[0] is state (field 3); utime, stime, cutime, cstime are fields 14-17 → indexes 11-14
      total += (Number(fields[11]) + Number(fields[12]) + Number(fields[13]) + Number(fields[14])) * TICK_MS;
      found += 1;
    } catch {
      /* the process exited */
    }
  }
  return found === 0 ? NaN : total;
}

/** How to read the CPU of a store's server (ms, cumulative); undefined for the memory store, which has none. */
export function serverCpuReader(store: string): (() => Promise<number>) | undefined {
  if (store === 'redis') return redisCpuMs;
  if (store === 'postgres') return async () => postgresCpuMs();
  return undefined;
}
