/** The oracle on hand-picked transitions, every one of them, with expressions aimed at each. */
import { describe, expect, it } from 'vitest';
import { transitionsIn, WallReader } from './oracle.js';
import { checkAround, NOTABLE_YEARS, notableExpressions, type OracleStats } from './oracle-property.js';

describe('cron next/latest equal the oracle around notable transitions', () => {
  it.each(NOTABLE_YEARS)('%s %i', (zone, year) => {
    const reader = new WallReader(zone);
    const transitions = transitionsIn(reader, year);
    expect(transitions.length).toBeGreaterThan(0);
    const stats: OracleStats = { cases: 0, exact: 0, bounded: 0 };
    for (const transition of transitions) {
      // Queries every 7 minutes over the trusted day either side of the transition.
      const queries: number[] = [];
      for (let q = (transition - 16 * 3600) * 1000; q <= (transition + 16 * 3600) * 1000; q += 7 * 60_000) queries.push(q);
      for (const expression of notableExpressions(reader, transition)) {
        stats.cases++;
        checkAround(reader, zone, expression, transition, queries, [0, 1, 2, 3, 5, 8, 13], stats);
      }
    }
    expect(stats.exact).toBeGreaterThan(0.6 * (stats.exact + stats.bounded));
  });
});
