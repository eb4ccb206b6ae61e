/**
 * `tickwork dashboard [--port n] [--host h] [--token T]`: serves `tickwork/dashboard` on
 * the store until SIGINT or SIGTERM. Read-only unless a token is given (`--token` or
 * `TICKWORK_DASHBOARD_TOKEN`): then every request must carry it as HTTP Basic auth (any
 * user name, the token as password; the browser asks once), and those requests may
 * trigger, pause, resume and backfill. It listens on 127.0.0.1 unless told otherwise.
 */
import { timingSafeEqual } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createDashboard } from '../src/dashboard/index.js';
import type { Store } from '../src/index.js';
import { UsageError } from './usage.js';

export interface DashboardFlags {
  readonly port?: string | undefined;
  readonly host?: string | undefined;
  readonly token?: string | undefined;
}

export interface Serving {
  /** The address it listens on, e.g. `http://127.0.0.1:8080/`. */
  readonly url: string;
  readonly readOnly: boolean;
  /** Resolves once the server has closed (after `stop()`). */
  readonly closed: Promise<void>;
  stop(): void;
}

export async function serveDashboard(store: Store, flags: DashboardFlags, env: NodeJS.ProcessEnv): Promise<Serving> {
  const port = flags.port === undefined ? 8080 : Number(flags.port);
  if (!/^\d+$/.test(flags.port ?? '0') || !Number.isInteger(port) || port > 65_535) throw new UsageError(`--port must be a port number, 0 to 65535 (got ${JSON.stringify(flags.port)})`);
  const host = flags.host ?? '127.0.0.1';
  const token = flags.token ?? (env.TICKWORK_DASHBOARD_TOKEN === '' ? undefined : env.TICKWORK_DASHBOARD_TOKEN);
  if (token !== undefined && token.length < 16) throw new UsageError('--token must be at least 16 characters');
  const handler = createDashboard({ store, ...(token === undefined ? {} : { auth: () => true, csrfSecret: `tickwork-cli:${token}` }) });
  const server = http.createServer((req, res) => {
    if (token !== undefined && !carriesToken(req, token)) {
      res.writeHead(401, { 'WWW-Authenticate': 'Basic realm="tickwork", charset="UTF-8"', 'Content-Type': 'text/plain; charset=utf-8' });
      res.end('tickwork dashboard: the token is the password (any user name)\n');
      return;
    }
    void handler(req, res);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  const shown = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  const closed = new Promise<void>((resolve) => server.once('close', () => resolve()));
  return {
    url: `http://${shown}:${address.port}/`,
    readOnly: token === undefined,
    closed,
    stop() {
      handler.close();
      server.close();
      server.closeAllConnections();
    },
  };
}

function carriesToken(req: http.IncomingMessage, token: string): boolean {
  const header = req.headers.authorization ?? '';
  if (!header.startsWith('Basic ')) return false;
  const decoded = Buffer.from(header.slice(6), 'base64').toString('utf8');
  const given = Buffer.from(decoded.slice(decoded.indexOf(':') + 1));
  const expected = Buffer.from(token);
  return given.length === expected.length && timingSafeEqual(given, expected);
}
