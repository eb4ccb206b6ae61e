/**
 * Where the `tickwork/telemetry` entry meets the core: importing the entry registers its
 * `createTelemetry` on `globalThis` (index.ts), and a `Scheduler` with `telemetry` set takes
 * it from there (loader.ts). Only types are imported here, so neither side brings the
 * other's code with it.
 */
import type { CreateTelemetry } from './telemetry.js';

/**
 * The `Symbol.for()` key of the registration. Versioned: a change of `TelemetryDeps` or
 * `TelemetryHooks` takes a new key, so that two tickwork versions in one process never hand
 * each other what the other does not expect.
 */
export const TELEMETRY_KEY = 'tickwork.telemetry.v1';

const registry = globalThis as Record<symbol, CreateTelemetry | undefined>;

/** The registered entry's `createTelemetry`, if an entry of this version was evaluated. */
export function registeredTelemetry(): CreateTelemetry | undefined {
  return registry[Symbol.for(TELEMETRY_KEY)];
}

/** Registers `create` unless an entry of this version already did. */
export function registerTelemetry(create: CreateTelemetry): void {
  registry[Symbol.for(TELEMETRY_KEY)] ??= create;
}
