/**
 * `tickwork dashboard`: the built bin serving the web dashboard on a real Redis store
 * until SIGTERM; read-only without a token, HTTP Basic auth and actions with one; bad
 * usage exits 2.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RedisStore } from '../../adapters/redis/index.js';
import { Scheduler } from '../../src/index.js';
import { REDIS_URL, deleteRedisKeys, requireServer, uniqueNamespace } from '../integration/servers.js';

const BIN = path.resolve(import.meta.dirname, '../../dist/cli.js');
const up = await requireServer('redis');
const TOKEN = 'correct-horse-battery-staple';

/** Starts the bin; resolves it with the URL it printed. */
async function start(args: readonly string[]): Promise<{ child: ChildProcess; url: string; line: string }> {
  const env = Object.fromEntries(Object.entries(process.env).filter(([key]) => !key.startsWith('TICKWORK_')));
  const child = spawn(process.execPath, [BIN, 'dashboard', ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  const line = await new Promise<string>((resolve, reject) => {
    child.stdout?.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      if (out.includes('\n')) resolve(out.split('\n')[0] as string);
    });
    child.once('exit', (code) => reject(new Error(`exited ${code}`)));
  });
  return { child, url: /on (http:\/\/\S+\/)/.exec(line)?.[1] as string, line };
}

function stopped(child: ChildProcess): Promise<number | null> {
  return new Promise((resolve) => {
    child.once('exit', (code) => resolve(code));
    child.kill('SIGTERM');
  });
}

describe.skipIf(!up)('tickwork dashboard', () => {
  const prefix = uniqueNamespace('twclidash');
  const flags = ['--redis', REDIS_URL, '--prefix', prefix, '--port', '0'];

  beforeAll(async () => {
    const store = new RedisStore({ url: REDIS_URL, prefix });
    const scheduler = new Scheduler({ store, logger: false });
    scheduler.register({ name: 'report', schedule: '0 3 * * *', handler: () => {} });
    await scheduler.start();
    await scheduler.stop();
    await store.close();
  });

  afterAll(async () => {
    const client = new Redis(REDIS_URL);
    await deleteRedisKeys(client, prefix);
    client.disconnect();
  });

  it('serves the store read-only on 127.0.0.1 and stops on SIGTERM with exit code 0', async () => {
    const { child, url, line } = await start(flags);
    expect(line).toMatch(/^tickwork dashboard on http:\/\/127\.0\.0\.1:\d+\/ \(the Redis store at .*, read-only: give --token to allow actions\)/);
    const page = await fetch(`${url}jobs/report`);
    expect(page.status).toBe(200);
    const text = await page.text();
    expect(text).toContain('at 03:00 every day');
    expect(text).not.toContain('method="post"');
    expect(await stopped(child)).toBe(0);
  });

  it('with a token: Basic auth on every request, and the actions', async () => {
    const { child, url } = await start([...flags, '--token', TOKEN]);
    try {
      expect((await fetch(url)).status).toBe(401);
      const authorization = `Basic ${Buffer.from(`admin:${TOKEN}`).toString('base64')}`;
      expect((await fetch(url, { headers: { authorization: `Basic ${Buffer.from('admin:wrong').toString('base64')}` } })).status).toBe(401);
      const page = await fetch(`${url}jobs/report`, { headers: { authorization } });
      expect(page.status).toBe(200);
      expect(await page.text()).toContain('method="post"');
    } finally {
      expect(await stopped(child)).toBe(0);
    }
  });

  it('exits 2 on bad usage', async () => {
    const env = Object.fromEntries(Object.entries(process.env).filter(([key]) => !key.startsWith('TICKWORK_')));
    for (const args of [['--port', 'x'], ['--token', 'short'], ['extra'], ['--limit', '3']]) {
      const child = spawn(process.execPath, [BIN, 'dashboard', '--redis', REDIS_URL, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
      let stderr = '';
      child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
      const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
      expect(code, stderr).toBe(2);
      expect(stderr.trimEnd().split('\n')).toHaveLength(1);
    }
  });
});
