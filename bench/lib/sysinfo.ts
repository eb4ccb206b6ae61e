/** The machine and server versions a run was measured on. */
import { execFileSync } from 'node:child_process';
import os from 'node:os';
import pg from 'pg';
import { Redis } from 'ioredis';

export const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
export const DATABASE_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

export interface SystemInfo {
  date: string;
  cpu: string;
  cores: number;
  memoryGb: number;
  os: string;
  node: string;
  redis: string;
  postgres: string;
  load: string;
}

export async function systemInfo(): Promise<SystemInfo> {
  let redis = 'unavailable';
  try {
    const client = new Redis(REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 1 });
    await client.connect();
    const info = await client.info('server');
    redis = /redis_version:(\S+)/.exec(info)?.[1] ?? 'unknown';
    await client.quit();
  } catch {
    try {
      redis = execFileSync('redis-cli', ['INFO', 'server'], { encoding: 'utf8' }).match(/redis_version:(\S+)/)?.[1] ?? redis;
    } catch {
      /* unavailable */
    }
  }
  let postgres = 'unavailable';
  try {
    const client = new pg.Client({ connectionString: DATABASE_URL });
    await client.connect();
    postgres = String((await client.query<{ version: string }>('SELECT version()')).rows[0]?.version ?? 'unknown').replace(/ on .*/, '');
    await client.end();
  } catch {
    /* unavailable */
  }
  return {
    date: new Date().toISOString(),
    cpu: os.cpus()[0]?.model ?? 'unknown',
    cores: os.cpus().length,
    memoryGb: Math.round(os.totalmem() / 2 ** 30),
    os: `${os.type()} ${os.release()} ${os.arch()}`,
    node: process.version,
    redis,
    postgres,
    load: os.loadavg().map((l) => l.toFixed(2)).join(' '),
  };
}
