/**
 * `tickwork/telemetry`: the OpenTelemetry instrumentation behind `new Scheduler({ telemetry })`.
 * A `Scheduler` with `telemetry` set loads this entry by itself, from the installed package
 * (loader.ts), so an app does not import it. An app bundled to run without tickwork in its
 * `node_modules` imports it once (`import 'tickwork/telemetry'`): importing it registers the
 * instrumentation for every `Scheduler` of the process, and the bundler keeps it.
 */
import { registerTelemetry } from './registry.js';
import { createTelemetry } from './telemetry.js';

registerTelemetry(createTelemetry);

/** What a `Scheduler` calls to set up its telemetry (internal: not for apps to call). */
export { createTelemetry };
export type { TelemetryOptions, TracerProviderLike, MeterProviderLike } from './telemetry.js';
