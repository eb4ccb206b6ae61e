/**
 * Run IDs never collide across jobs: for every valid job name, idempotency key and
 * tick, `parseRunId` gives back exactly what the ID was made of, for each of the
 * three forms. A left inverse makes the ID functions injective together: two runs
 * with the same ID have the same job, trigger and tick (or key).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  NAME_PATTERN,
  backfillRunId,
  isJobName,
  manualRunId,
  parseRunId,
  reservedSegmentOf,
  scheduledRunId,
  unixSeconds,
  type ParsedRunId,
} from '../src/run-id.js';

/** Segments chosen to break a naive parse: empty, signs, digits, near-misses of the reserved words, and the words themselves. */
const NASTY = ['', '-', '_', '0', '00', '-0', '-1', '1', '007', '1767225600', '-1767225600', 'manual', 'backfill', 'Manual', 'BACKFILL', 'manualx', 'xmanual', 'backfil', 'manual-', '_backfill', 'schedule', 'e5', '1e3'];

const segment = fc.oneof(fc.constantFrom(...NASTY), fc.stringMatching(/^[A-Za-z0-9_-]{0,6}$/));
/** Dot-joined segments: leading, trailing and doubled dots come from empty segments. */
const dotted = fc.array(segment, { minLength: 1, maxLength: 7 }).map((parts) => parts.join('.'));

const jobName = dotted.filter(isJobName);
/** Keys follow the name pattern but may hold the reserved segments. */
const key = dotted.filter((text) => NAME_PATTERN.test(text));
/** Every instant the API accepts, negative seconds and the ±1 ms around whole seconds included. */
const tick = fc.oneof(
  fc.integer({ min: -8.64e15, max: 8.64e15 }),
  fc.integer({ min: -5, max: 5 }).map((seconds) => seconds * 1000),
  fc.integer({ min: -5_000, max: 5_000 }),
);

type Made = { id: string; parsed: ParsedRunId };

const made: fc.Arbitrary<Made> = fc.oneof(
  fc.tuple(jobName, tick).map(([name, at]): Made => ({ id: scheduledRunId(name, at), parsed: { jobName: name, trigger: 'schedule', seconds: unixSeconds(at) } })),
  fc.tuple(jobName, tick).map(([name, at]): Made => ({ id: backfillRunId(name, at), parsed: { jobName: name, trigger: 'backfill', seconds: unixSeconds(at) } })),
  fc.tuple(jobName, key).map(([name, k]): Made => ({ id: manualRunId(name, k), parsed: { jobName: name, trigger: 'manual', key: k } })),
);

describe('run IDs', () => {
  it('parse back to their job, trigger and tick or key, for every valid name, key and tick', () => {
    fc.assert(
      fc.property(made, ({ id, parsed }) => {
        expect(parseRunId(id)).toEqual(parsed);
      }),
      { numRuns: 5_000 },
    );
  });

  it('never collide between different jobs, triggers, ticks or keys', () => {
    // Pairs built to collide under a naive grammar: the second name extends the first with a nasty segment.
    const related = fc.tuple(jobName, fc.constantFrom(...NASTY), tick, key).chain(([name, extra, at, k]) => {
      const longer = `${name}.${extra}`;
      const ids = [scheduledRunId(name, at), backfillRunId(name, at), manualRunId(name, k)];
      if (isJobName(longer)) ids.push(scheduledRunId(longer, at), backfillRunId(longer, at), manualRunId(longer, k));
      return fc.constant(ids);
    });
    fc.assert(
      fc.property(made, made, (a, b) => {
        if (a.id === b.id) expect(a.parsed).toEqual(b.parsed);
      }),
      { numRuns: 5_000 },
    );
    fc.assert(
      fc.property(related, (ids) => {
        expect(new Set(ids).size).toBe(ids.length);
      }),
      { numRuns: 5_000 },
    );
  });

  it('generates the nasty names it claims to (the properties above are not vacuous)', () => {
    const names = fc.sample(jobName, 5_000);
    expect(names.some((name) => name.startsWith('.'))).toBe(true);
    expect(names.some((name) => name.endsWith('.'))).toBe(true);
    expect(names.some((name) => name.includes('..'))).toBe(true);
    expect(names.some((name) => /(^|\.)-?\d+$/.test(name))).toBe(true);
    expect(names.some((name) => /(^|\.)(Manual|manualx|xmanual|BACKFILL|backfil)(\.|$)/.test(name))).toBe(true);
    expect(fc.sample(key, 5_000).some((k) => /(^|\.)(manual|backfill)(\.|$)/.test(k))).toBe(true);
  });

  it('refuses what is not a run ID of a valid name', () => {
    for (const id of ['', 'a', '.5', 'a.manual', 'a.manual.', 'a.backfill.x', 'a.backfill.1.2', 'a.05', 'a.-0', 'a.1e3', 'a b.5', 'manual.5', 'a.manual.k y']) {
      expect(parseRunId(id), id).toBeUndefined();
    }
    expect(parseRunId('a.5.2')).toEqual({ jobName: 'a.5', trigger: 'schedule', seconds: 2 });
    expect(parseRunId('a.manual.k.manual.5')).toEqual({ jobName: 'a', trigger: 'manual', key: 'k.manual.5' });
  });

  it('gave job "a" and a job named "a.manual" the same ID under the old grammar, which the name grammar now refuses', () => {
    expect(manualRunId('a', '1767225600')).toBe(scheduledRunId('a.manual', 1_767_225_600_000));
    expect(backfillRunId('a', 1_767_225_600_000)).toBe(scheduledRunId('a.backfill', 1_767_225_600_000));
    expect(isJobName('a.manual')).toBe(false);
    expect(isJobName('a.backfill')).toBe(false);
    expect(isJobName('x.manual.y')).toBe(false);
    expect(isJobName('a.Manual')).toBe(true);
    expect(isJobName('manualx.backfil')).toBe(true);
    expect(isJobName('a.xmanual.manuals')).toBe(true);
    expect(reservedSegmentOf('backfill.x.manual')).toBe('backfill');
    expect(reservedSegmentOf('x..manual')).toBe('manual');
    expect(reservedSegmentOf('manual')).toBe('manual');
    expect(reservedSegmentOf('a.xbackfill')).toBeUndefined();
  });

  it('finds a reserved segment exactly where splitting the name on dots does', () => {
    fc.assert(
      fc.property(fc.array(fc.constantFrom('', 'a', 'manual', 'backfill', 'manualx', 'xbackfill', 'Manual'), { maxLength: 5 }), (segments) => {
        const name = segments.join('.');
        expect(reservedSegmentOf(name)).toBe(name.split('.').find((segment) => segment === 'manual' || segment === 'backfill'));
      }),
    );
  });
});
