/**
 * Named daylight-saving cases. Expected instants are worked out by hand from the
 * zones' rules (and checked against Intl's offsets), never taken from cron-parser.
 */
import { describe, expect, it } from 'vitest';
import { at, cron, expectAgreement, expectTicks, iso } from './helpers.js';

describe('America/New_York, spring forward 2026-03-08 (02:00 EST -> 03:00 EDT at 07:00Z)', () => {
  const zone = 'America/New_York';

  it('fires a nonexistent 02:30 once, at 03:30 EDT', () => {
    expectTicks(cron('30 2 * * *', zone), '2026-03-07T00:00Z', '2026-03-10T00:00Z', [
      '2026-03-07T07:30:00Z', // 02:30 EST
      '2026-03-08T07:30:00Z', // 02:30 does not exist: 03:30 EDT
      '2026-03-09T06:30:00Z', // 02:30 EDT
    ]);
  });

  it('latest() sees the shifted tick that cron-parser 5.10 prev() skips', () => {
    expect(iso(cron('30 2 * * *', zone).latest(at('2026-03-08T12:00Z')))).toBe('2026-03-08T07:30:00Z');
  });

  it('hourly schedules follow elapsed time: 02:00 folds into 03:00', () => {
    expectTicks(cron('0 * * * *', zone), '2026-03-08T04:30Z', '2026-03-08T09:30Z', [
      '2026-03-08T05:00:00Z', // 00:00 EST
      '2026-03-08T06:00:00Z', // 01:00 EST
      '2026-03-08T07:00:00Z', // 03:00 EDT (and the shifted 02:00)
      '2026-03-08T08:00:00Z',
      '2026-03-08T09:00:00Z',
    ]);
  });

  it('*/30 keeps a steady 30 real minutes through the gap', () => {
    expectTicks(cron('*/30 * * * *', zone), '2026-03-08T05:45Z', '2026-03-08T08:15Z', [
      '2026-03-08T06:00:00Z',
      '2026-03-08T06:30:00Z',
      '2026-03-08T07:00:00Z',
      '2026-03-08T07:30:00Z',
      '2026-03-08T08:00:00Z',
    ]);
  });

  it('never fires twice when the shifted time is itself a tick (30 2,3)', () => {
    expectTicks(cron('30 2,3 * * *', zone), '2026-03-07T00:00Z', '2026-03-10T00:00Z', [
      '2026-03-07T07:30:00Z',
      '2026-03-07T08:30:00Z',
      '2026-03-08T07:30:00Z', // 02:30 shifted = 03:30 EDT: one tick
      '2026-03-09T06:30:00Z',
      '2026-03-09T07:30:00Z',
    ]);
  });

  it('next() and latest() agree at every minute of the day', () => {
    for (const expression of ['30 2 * * *', '0 * * * *', '*/30 * * * *', '30 2,3 * * *', '15 1-3 * * *', '*/7 2 * * *']) {
      expect(expectAgreement(cron(expression, zone), '2026-03-08T03:00Z', '2026-03-09T06:00Z')).toBeGreaterThan(3000);
    }
  });
});

describe('America/New_York, fall back 2026-11-01 (02:00 EDT -> 01:00 EST at 06:00Z)', () => {
  const zone = 'America/New_York';

  it('fires a repeated 01:30 once, at its first occurrence', () => {
    expectTicks(cron('30 1 * * *', zone), '2026-10-31T00:00Z', '2026-11-03T00:00Z', [
      '2026-10-31T05:30:00Z',
      '2026-11-01T05:30:00Z', // 01:30 EDT, not 06:30Z (01:30 EST)
      '2026-11-02T06:30:00Z',
    ]);
  });

  it('a fixed hour range fires the repeated hour once', () => {
    expectTicks(cron('0 1-2 * * *', zone), '2026-11-01T00:00Z', '2026-11-01T12:00Z', [
      '2026-11-01T05:00:00Z', // 01:00 EDT
      '2026-11-01T07:00:00Z', // 02:00 EST
    ]);
  });

  it('hourly fires in both 01:00s', () => {
    expectTicks(cron('0 * * * *', zone), '2026-11-01T03:30Z', '2026-11-01T07:30Z', [
      '2026-11-01T04:00:00Z',
      '2026-11-01T05:00:00Z', // 01:00 EDT
      '2026-11-01T06:00:00Z', // 01:00 EST
      '2026-11-01T07:00:00Z',
    ]);
  });

  it('*/15 fires every 15 real minutes through the fold', () => {
    const expected: string[] = [];
    for (let t = at('2026-11-01T04:00Z'); t <= at('2026-11-01T08:00Z'); t += 15 * 60_000) expected.push(iso(t)!);
    expectTicks(cron('*/15 * * * *', zone), '2026-11-01T03:59Z', '2026-11-01T08:00Z', expected);
  });

  it('next() and latest() agree at every minute of the day', () => {
    for (const expression of ['30 1 * * *', '0 * * * *', '*/15 * * * *', '0 1-2 * * *', '59 0,1 * * *']) {
      expect(expectAgreement(cron(expression, zone), '2026-11-01T03:00Z', '2026-11-02T06:00Z')).toBeGreaterThan(3000);
    }
  });
});

describe('Australia/Lord_Howe: 30-minute shifts', () => {
  const zone = 'Australia/Lord_Howe';

  it('2026-10-04 gap 02:00 -> 02:30 (+10:30 -> +11): 02:15 fires at 02:45 and the day is not skipped', () => {
    expectTicks(cron('15 2 * * *', zone), '2026-10-02T00:00Z', '2026-10-05T00:00Z', [
      '2026-10-02T15:45:00Z', // 10-03 02:15 +10:30
      '2026-10-03T15:45:00Z', // 10-04 02:15 does not exist: 02:45 +11
      '2026-10-04T15:15:00Z', // 10-05 02:15 +11
    ]);
  });

  it('shifted ticks that land on real ones are one tick each', () => {
    expectTicks(cron('*/15 2 * * *', zone), '2026-10-03T15:00Z', '2026-10-03T17:00Z', [
      '2026-10-03T15:30:00Z', // 02:00 shifted and the real 02:30
      '2026-10-03T15:45:00Z', // 02:15 shifted and the real 02:45
    ]);
  });

  it('2026-04-05 fold 01:30-02:00 (+11 -> +10:30): 01:45 fires once, elapsed-time schedules twice', () => {
    expectTicks(cron('45 1 * * *', zone), '2026-04-04T12:00Z', '2026-04-05T18:00Z', [
      '2026-04-04T14:45:00Z', // 01:45 +11; not 15:15Z (01:45 +10:30)
      '2026-04-05T15:15:00Z',
    ]);
    expectTicks(cron('*/15 * * * *', zone), '2026-04-04T14:20Z', '2026-04-04T15:35Z', [
      '2026-04-04T14:30:00Z', // 01:30 +11
      '2026-04-04T14:45:00Z', // 01:45 +11
      '2026-04-04T15:00:00Z', // 01:30 +10:30
      '2026-04-04T15:15:00Z', // 01:45 +10:30
      '2026-04-04T15:30:00Z', // 02:00 +10:30
    ]);
  });
});

describe('midnight gaps and folds', () => {
  it('America/Santiago 2026-09-06: 00:00 does not exist, midnight fires at 01:00 -03', () => {
    expectTicks(cron('0 0 * * *', 'America/Santiago'), '2026-09-05T00:00Z', '2026-09-08T00:00Z', [
      '2026-09-05T04:00:00Z',
      '2026-09-06T04:00:00Z',
      '2026-09-07T03:00:00Z',
    ]);
    expect(iso(cron('30 0 * * *', 'America/Santiago').next(at('2026-09-06T00:00Z')))).toBe('2026-09-06T04:30:00Z');
  });

  it('America/Santiago 2026-04-05: 23:30 on the 4th repeats and fires once', () => {
    expectTicks(cron('30 23 * * *', 'America/Santiago'), '2026-04-04T12:00Z', '2026-04-06T12:00Z', [
      '2026-04-05T02:30:00Z', // 23:30 -03
      '2026-04-06T03:30:00Z', // 23:30 -04 next day
    ]);
  });

  it('America/Havana 2026-03-08 and 2026-11-01 (changes at midnight)', () => {
    expectTicks(cron('0 0 * * *', 'America/Havana'), '2026-03-07T00:00Z', '2026-03-09T12:00Z', [
      '2026-03-07T05:00:00Z',
      '2026-03-08T05:00:00Z', // 00:00 missing: 01:00 CDT
      '2026-03-09T04:00:00Z',
    ]);
    expectTicks(cron('30 0 * * *', 'America/Havana'), '2026-10-31T12:00Z', '2026-11-01T12:00Z', [
      '2026-11-01T04:30:00Z', // 00:30 CDT, not 05:30Z (00:30 CST)
    ]);
  });
});

describe('other zones', () => {
  it('Europe/Dublin (negative DST in tzdata): 01:30 on both change days', () => {
    expectTicks(cron('30 1 * * *', 'Europe/Dublin'), '2026-03-28T00:00Z', '2026-03-31T00:00Z', [
      '2026-03-28T01:30:00Z',
      '2026-03-29T01:30:00Z', // 01:30 missing: 02:30 IST
      '2026-03-30T00:30:00Z',
    ]);
    expectTicks(cron('30 1 * * *', 'Europe/Dublin'), '2026-10-24T00:00Z', '2026-10-27T00:00Z', [
      '2026-10-24T00:30:00Z',
      '2026-10-25T00:30:00Z', // first 01:30 (IST)
      '2026-10-26T01:30:00Z',
    ]);
  });

  it('Pacific/Chatham (+12:45 / +13:45)', () => {
    expectTicks(cron('0 3 * * *', 'Pacific/Chatham'), '2026-09-25T12:00Z', '2026-09-28T12:00Z', [
      '2026-09-25T14:15:00Z', // 09-26 03:00 +12:45
      '2026-09-26T14:15:00Z', // 09-27 03:00 missing: 04:00 +13:45
      '2026-09-27T13:15:00Z', // 09-28 03:00 +13:45
    ]);
    expectTicks(cron('0 3 * * *', 'Pacific/Chatham'), '2026-04-03T12:00Z', '2026-04-05T18:00Z', [
      '2026-04-03T13:15:00Z',
      '2026-04-04T13:15:00Z', // first 03:00 (+13:45), not 14:15Z
      '2026-04-05T14:15:00Z',
    ]);
  });

  it('Antarctica/Troll: a two-hour gap (+00 -> +02)', () => {
    expectTicks(cron('0 2 * * *', 'Antarctica/Troll'), '2026-03-28T00:00Z', '2026-03-30T12:00Z', [
      '2026-03-28T02:00:00Z',
      '2026-03-29T02:00:00Z', // 02:00 missing: 04:00 +02
      '2026-03-30T00:00:00Z',
    ]);
  });

  it('Pacific/Apia skipped 2011-12-30 entirely: its ticks move to the 31st', () => {
    expectTicks(cron('0 12 * * *', 'Pacific/Apia'), '2011-12-29T00:00Z', '2012-01-01T00:00Z', [
      '2011-12-29T22:00:00Z', // 12-29 12:00 -10
      '2011-12-30T22:00:00Z', // 12-30 12:00 shifted by 24 h = 12-31 12:00 +14: one tick
      '2011-12-31T22:00:00Z',
    ]);
    expect(iso(cron('0 12 30 12 *', 'Pacific/Apia').next(at('2011-06-01T00:00Z')))).toBe('2011-12-30T22:00:00Z');
  });

  it('Pacific/Kiritimati skipped 1994-12-31: a gap that runs across the UTC new year', () => {
    // -10 until 1994-12-31T10:00Z (12-30 24:00 local), then +14 (1995-01-01 00:00 local).
    expectTicks(cron('15 17 * * *', 'Pacific/Kiritimati'), '1994-12-30T12:00Z', '1995-01-03T00:00Z', [
      '1994-12-31T03:15:00Z', // 12-30 17:15 -10
      '1995-01-01T03:15:00Z', // 12-31 17:15 shifted by 24 h = 01-01 17:15 +14: one tick
      '1995-01-02T03:15:00Z',
    ]);
    const newYearsEve = cron('15 17 31 12 *', 'Pacific/Kiritimati');
    expect(iso(newYearsEve.next(at('1994-06-01T00:00Z')))).toBe('1995-01-01T03:15:00Z');
    expect(iso(newYearsEve.latest(at('1995-06-01T00:00Z')))).toBe('1995-01-01T03:15:00Z');
  });

  it('Asia/Kolkata (+05:30, no DST) and UTC', () => {
    expect(iso(cron('30 9 * * *', 'Asia/Kolkata').next(at('2026-01-01T00:00Z')))).toBe('2026-01-01T04:00:00Z');
    expect(iso(cron('30 9 * * *', 'UTC').latest(at('2026-01-01T00:00Z')))).toBe('2025-12-31T09:30:00Z');
  });
});
