/**
 * Type tests: what the compiler accepts and refuses at the public API. `expectTypeOf`
 * pins inferred types; each `@ts-expect-error` line must fail to compile, which
 * `npm run typecheck` checks (an unused directive is an error there).
 */
import { describe, expectTypeOf, it } from 'vitest';
import { Scheduler, type Duration, type JsonValue, type RunContext, type RunInfo } from '../src/index.js';
import { FakeClock } from '../src/testing/index.js';

/** An interface, not a type alias: it has no index signature. */
interface Report {
  region: string;
  count?: number;
  tags: string[];
  nested: { enabled: boolean; ratio: number | null };
}

interface WithDate {
  when: Date;
}

interface WithMethod {
  name: string;
  describe(): string;
}

const report: Report = { region: 'eu', tags: ['a'], nested: { enabled: true, ratio: null } };

describe('Duration', () => {
  it('accepts milliseconds and <number><unit> strings', () => {
    const accepted: Duration[] = [500, '500', '500ms', '10s', '5m', '2h', '1d', '1w', '1h30m', '1d2h30m', '1.5h'];
    expectTypeOf(accepted).toEqualTypeOf<Duration[]>();
    expectTypeOf<'10s'>().toExtend<Duration>();
    expectTypeOf<'1h30m'>().toExtend<Duration>();
  });

  it('refuses other strings at compile time', () => {
    expectTypeOf<'10x'>().not.toExtend<Duration>();
    expectTypeOf<'90 seconds'>().not.toExtend<Duration>();
    expectTypeOf<'soon'>().not.toExtend<Duration>();
    expectTypeOf<string>().not.toExtend<Duration>();
    const scheduler = new Scheduler({ clock: new FakeClock() });
    // @ts-expect-error '10x' is no duration
    expectTypeOf(() => scheduler.register({ name: 'a', schedule: '* * * * *', timeout: '10x', handler: () => {} })).toBeFunction();
    // @ts-expect-error '90 seconds' is no duration
    expectTypeOf(() => scheduler.register({ name: 'a', schedule: '* * * * *', startingDeadline: '90 seconds', handler: () => {} })).toBeFunction();
    // @ts-expect-error FakeClock.advance takes a Duration too
    expectTypeOf(() => new FakeClock().advance('1 hour')).toBeFunction();
  });
});

describe('data', () => {
  it('accepts an interface without an index signature, and ctx.data keeps its type', () => {
    const scheduler = new Scheduler({ clock: new FakeClock() });
    scheduler.register({
      name: 'report',
      schedule: '0 * * * *',
      data: report,
      handler: (ctx) => {
        expectTypeOf(ctx.data).toEqualTypeOf<Report | undefined>();
        expectTypeOf(ctx).toEqualTypeOf<RunContext<Report>>();
      },
    });
  });

  it('takes the type from the handler when the job has no data', () => {
    const scheduler = new Scheduler({ clock: new FakeClock() });
    scheduler.register({
      name: 'typed',
      schedule: '0 * * * *',
      handler: (ctx: RunContext<Report>) => ctx.data?.region,
    });
    scheduler.register<Report>({ name: 'explicit', schedule: '0 * * * *', handler: (ctx) => expectTypeOf(ctx.data).toEqualTypeOf<Report | undefined>() });
  });

  it('keeps JsonValue when nothing says otherwise', () => {
    const scheduler = new Scheduler({ clock: new FakeClock() });
    scheduler.register({ name: 'plain', schedule: '0 * * * *', handler: (ctx) => expectTypeOf(ctx.data).toEqualTypeOf<JsonValue | undefined>() });
    scheduler.register({ name: 'json', schedule: '0 * * * *', data: { a: [1, 'b', null] }, handler: () => {} });
  });

  it('refuses data JSON cannot hold', () => {
    const scheduler = new Scheduler({ clock: new FakeClock() });
    const withDate: WithDate = { when: new Date() };
    const withMethod: WithMethod = { name: 'x', describe: () => 'x' };
    // Not called: at run time they throw a ValidationError (see validation.test.ts).
    // @ts-expect-error a Date is not JSON
    expectTypeOf(() => scheduler.register({ name: 'date', schedule: '0 * * * *', data: withDate, handler: () => {} })).toBeFunction();
    // @ts-expect-error a method is not JSON
    expectTypeOf(() => scheduler.register({ name: 'method', schedule: '0 * * * *', data: withMethod, handler: () => {} })).toBeFunction();
    // @ts-expect-error undefined is not JSON
    expectTypeOf(() => scheduler.register({ name: 'undef', schedule: '0 * * * *', data: { a: undefined as undefined }, handler: () => {} })).toBeFunction();
  });

  it('types the run records of events, listRuns() and trigger() by the scheduler', async () => {
    const scheduler = new Scheduler<Report>({ clock: new FakeClock() });
    scheduler.on('run:created', ({ run }) => expectTypeOf(run.data).toEqualTypeOf<Report | undefined>());
    scheduler.on('run:failed', ({ run }) => expectTypeOf(run).toEqualTypeOf<RunInfo<Report>>());
    expectTypeOf(scheduler.listRuns).returns.resolves.toEqualTypeOf<RunInfo<Report>[]>();
    expectTypeOf(scheduler.trigger).returns.resolves.toEqualTypeOf<RunInfo<Report>>();
    // @ts-expect-error a manual run's data is the scheduler's data type
    expectTypeOf(() => scheduler.trigger('report', { data: { other: 1 } })).toBeFunction();
    scheduler.register({ name: 'report', schedule: '0 * * * *', data: report, handler: (ctx) => expectTypeOf(ctx.data).toEqualTypeOf<Report | undefined>() });
  });
});
