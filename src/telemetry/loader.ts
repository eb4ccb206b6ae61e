/**
 * The core's side of telemetry: a `Scheduler` with `telemetry` set loads
 * `@opentelemetry/api` (`DRIVER_MISSING` when it is not installed), then the
 * instrumentation itself, the `tickwork/telemetry` entry (telemetry.ts), which the core
 * does not import: an app without telemetry, bundled, does not carry it. The entry is
 * the one registered on `globalThis` by an `import 'tickwork/telemetry'` (a bundled app,
 * or a run from source), else the installed package's, loaded like an optional driver
 * (driver.ts): synchronously, by the package's own name, so that construction reports a
 * failure at once.
 */
import type * as OTel from '@opentelemetry/api';
import type { Clock } from '../clock.js';
import { localRequire, notFound, requireDriver } from '../driver.js';
import { RunAbortedError, TickworkError } from '../errors.js';
import { jitteredReadyAt } from '../planner.js';
import { registeredTelemetry } from './registry.js';
import type { CreateTelemetry, TelemetryHooks, TelemetryOptions } from './telemetry.js';

const ENTRY = 'tickwork/telemetry';

/**
 * The telemetry of one scheduler; throws `DRIVER_MISSING` when `@opentelemetry/api` or the
 * entry cannot be loaded. An entry loaded from `node_modules` registers itself as an imported
 * one does, and is taken from there: one of another tickwork version, whose key differs (a
 * bundle deployed next to an older install), is not taken.
 */
export function loadTelemetry(option: true | TelemetryOptions, clock: Clock): TelemetryHooks {
  const api = requireDriver<typeof OTel>('@opentelemetry/api');
  const create = registeredTelemetry() ?? requireEntry();
  return create(option, { api, clock, jitteredReadyAt, RunAbortedError });
}

function requireEntry(): CreateTelemetry {
  const missing = (why: string, cause?: unknown) =>
    new TickworkError('DRIVER_MISSING', `the telemetry option needs the "${ENTRY}" module${why}: an app bundled to run without tickwork in its node_modules imports it (import '${ENTRY}')`, { cause });
  try {
    localRequire()(ENTRY);
  } catch (error) {
    throw notFound(error, ENTRY) ? missing(', which could not be loaded', error) : error;
  }
  const create = registeredTelemetry();
  if (create === undefined) throw missing(' of this tickwork version, and node_modules has another');
  return create;
}
