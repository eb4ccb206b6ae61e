/**
 * Deterministic run IDs, and the job-name grammar that keeps them unambiguous. A
 * tick's ID depends only on the job and the tick, so every instance that plans the
 * same tick names the same run, and the store's "create if absent" makes each tick
 * produce at most one run.
 *
 * The grammar (SPEC §5 pins the three forms):
 *
 *   scheduled   <name>.<seconds>
 *   manual      <name>.manual.<key>
 *   backfill    <name>.backfill.<seconds>
 *
 * `<seconds>` is a decimal integer (`-?[1-9][0-9]*` or `0`); `<key>` is 1 to 200
 * letters, digits, `-`, `_` or `.`. A job name is 1 to 200 of the same characters
 * but has no dot-separated segment equal to `manual` or `backfill`. So in any ID
 * the first `manual` or `backfill` segment ends the name (a key may contain such
 * segments: they come after), and an ID with neither is a scheduled run's, whose
 * name is everything before the last dot. Every ID therefore parses back to one
 * (job, trigger, tick or key), and IDs of different jobs never collide:
 * `parseRunId` is that parse, and test/run-id.property.test.ts proves the round trip.
 */

/** The characters and length of a job name or an idempotency key. */
export const NAME_PATTERN = /^[A-Za-z0-9_.-]{1,200}$/;

/** Segments that mark manual and backfill run IDs, and so may not appear in a job name. */
export const RESERVED_NAME_SEGMENTS: readonly string[] = ['manual', 'backfill'];

const SECONDS = /^(?:0|-?[1-9][0-9]*)$/;

/** A reserved segment between dots (or the name's ends). A regular expression, not a split: no array per call for a name without one. */
const RESERVED_SEGMENT = new RegExp(`(?:^|\\.)(${RESERVED_NAME_SEGMENTS.join('|')})(?=\\.|$)`);

/** The reserved segment `name` contains (`manual` or `backfill`), if any. */
export function reservedSegmentOf(name: string): string | undefined {
  return RESERVED_SEGMENT.exec(name)?.[1];
}

/** True when `name` is a job name under the current grammar: run IDs of such jobs never collide. */
export function isJobName(name: string): boolean {
  return NAME_PATTERN.test(name) && reservedSegmentOf(name) === undefined;
}

/** Whole seconds since the epoch, as the ID shows them. */
export function unixSeconds(instant: number): number {
  // `+ 0` turns the -0 of a tick in (-1000, 0) into 0, which is how the ID prints it anyway.
  return Math.floor(instant / 1000) + 0;
}

/** `nightly-report.1767233400` */
export function scheduledRunId(jobName: string, scheduledAt: number): string {
  return `${jobName}.${unixSeconds(scheduledAt)}`;
}

/** `nightly-report.manual.<key>` */
export function manualRunId(jobName: string, key: string): string {
  return `${jobName}.manual.${key}`;
}

/** `nightly-report.backfill.1767233400`: apart from scheduled runs, so a backfill re-runs ticks that already ran. */
export function backfillRunId(jobName: string, scheduledAt: number): string {
  return `${jobName}.backfill.${unixSeconds(scheduledAt)}`;
}

/** What a run ID says: its job, its trigger, and its tick (in whole seconds) or its key. */
export type ParsedRunId =
  | { readonly jobName: string; readonly trigger: 'schedule' | 'backfill'; readonly seconds: number }
  | { readonly jobName: string; readonly trigger: 'manual'; readonly key: string };

/**
 * Parses a run ID made by the functions above for a job name of the current grammar;
 * `undefined` for anything else (an index ID `${runId}.${index}` included, unless it
 * is also a run ID). For every valid name, key and tick, `parseRunId(scheduledRunId(name,
 * t))` is `{ jobName: name, trigger: 'schedule', seconds: unixSeconds(t) }`, and
 * likewise for the other two forms.
 */
export function parseRunId(id: string): ParsedRunId | undefined {
  const segments = id.split('.');
  const marker = segments.findIndex((segment) => RESERVED_NAME_SEGMENTS.includes(segment));
  const jobName = segments.slice(0, marker === -1 ? -1 : marker).join('.');
  if (segments.length < 2 || !isJobName(jobName)) return undefined;
  if (marker === -1) {
    const last = segments[segments.length - 1] as string;
    return SECONDS.test(last) ? { jobName, trigger: 'schedule', seconds: Number(last) } : undefined;
  }
  const rest = segments.slice(marker + 1);
  if (segments[marker] === 'manual') {
    const key = rest.join('.');
    return rest.length > 0 && NAME_PATTERN.test(key) ? { jobName, trigger: 'manual', key } : undefined;
  }
  return rest.length === 1 && SECONDS.test(rest[0] as string) ? { jobName, trigger: 'backfill', seconds: Number(rest[0]) } : undefined;
}
