/**
 * Helpers of the dashboard's browser tests: Debian's headless Chromium driven by
 * playwright-core, and a dashboard served by node:http on a free port. Under CI a
 * missing browser is a failure, never a skip; locally the suite skips with a message.
 */
import { existsSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { chromium, type Browser } from 'playwright-core';
import { createDashboard, type DashboardHandler, type DashboardOptions } from '../../src/dashboard/index.js';

export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/** True when the browser is there; throws under CI when it is not (`.ci/run` installs it). */
export function requireBrowser(): boolean {
  if (existsSync(CHROMIUM)) return true;
  const message = `no Chromium at ${CHROMIUM} (apt-get install -y chromium)`;
  if (process.env.CI) throw new Error(`${message}; CI requires it (.ci/run installs it)`);
  console.warn(`[tickwork] SKIPPING dashboard browser tests: ${message}`);
  return false;
}

export function launchBrowser(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'],
  });
}

export interface Served {
  readonly url: string;
  readonly handler: DashboardHandler;
  close(): Promise<void>;
}

/** Serves a dashboard on 127.0.0.1 at a free port, mounted at `options.basePath`. */
export async function serveDashboard(options: DashboardOptions): Promise<Served> {
  const handler = createDashboard(options);
  const server = http.createServer((req, res) => void handler(req, res));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}${options.basePath ?? ''}`,
    handler,
    close: async () => {
      handler.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
