/**
 * Loading an optional peer dependency (`ioredis`, `pg`, `@opentelemetry/api`) when
 * it is first needed: at a store's construction or start, or when telemetry is
 * turned on, never at import. A package that is not installed is a
 * `TickworkError` with code `'DRIVER_MISSING'` naming it and the command that
 * installs it.
 *
 * The load is a synchronous `require` resolved from this module's own location, so
 * that a constructor can report a missing driver at once, ESM and CommonJS builds
 * behave alike, and a bundler (which cannot follow a computed `require`) leaves the
 * driver to be loaded from `node_modules` at run time instead of failing the build.
 */
import { createRequire } from 'node:module';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { TickworkError } from './errors.js';

/** The optional peers tickwork loads on demand. */
export type DriverName = 'ioredis' | 'pg' | '@opentelemetry/api';

/** What needs each driver, for the error message. */
const NEEDED_BY: Record<DriverName, string> = {
  ioredis: 'RedisStore',
  pg: 'PostgresStore with a connectionString',
  '@opentelemetry/api': 'the telemetry option',
};

/** Loads `name` or throws `DRIVER_MISSING`; any other failure to load it is rethrown as is. */
export function requireDriver<T>(name: DriverName): T {
  try {
    return localRequire()(name) as T;
  } catch (error) {
    if (notFound(error, name)) throw driverMissing(name, error);
    throw error;
  }
}

export function driverMissing(name: DriverName, cause?: unknown): TickworkError {
  return new TickworkError(
    'DRIVER_MISSING',
    `${NEEDED_BY[name]} needs the "${name}" package, which is not installed. Install it with: npm install ${name}`,
    { cause },
  );
}

/**
 * A `require` resolving from this module (both builds have `import.meta.url`; the
 * CommonJS one through tsup's shim). Bundled into an app's CommonJS bundle it has
 * none, and resolves from the app's entry script instead, next to its `node_modules`.
 */
export function localRequire(): NodeJS.Require {
  const here = (import.meta as { url?: string }).url;
  return createRequire(here ?? pathToFileURL(process.argv[1] ?? path.join(process.cwd(), 'index.js')).href);
}

/** The driver itself is missing (not one of its own dependencies, which is a broken install to report as is). */
export function notFound(error: unknown, name: string): boolean {
  if (typeof error !== 'object' || error === null) return false;
  const { code, message } = error as { code?: unknown; message?: unknown };
  return (
    (code === 'MODULE_NOT_FOUND' || code === 'ERR_MODULE_NOT_FOUND') &&
    typeof message === 'string' &&
    (message.includes(`'${name}'`) || message.includes(`"${name}"`))
  );
}
