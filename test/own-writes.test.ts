/** OwnWrites: which job-changed notifications are this instance's own echoes, and which write results may be adopted. */
import { expect, it } from 'vitest';
import { ECHO_WINDOW_MS, OwnWrites } from '../src/own-writes.js';

it('skips one notification per write announced, whether it comes before or after the result', () => {
  const writes = new OwnWrites();
  const token = writes.expect(['a', 'b'], 0);
  expect(writes.isEcho('a', 1)).toBe(true); // before the result: the write's own echo
  expect(writes.isCurrent(token, 'a')).toBe(true);
  expect(writes.isEcho('a', 2)).toBe(false); // one more: another writer's
  expect(writes.isEcho('b', 3)).toBe(true); // after the result
  expect(writes.isEcho('c', 3)).toBe(false);
});

it('does not adopt a result once a reload or a full load began after the write was announced', () => {
  const writes = new OwnWrites();
  const token = writes.expect(['a', 'b'], 0);
  writes.reading('a');
  expect(writes.isCurrent(token, 'a')).toBe(false);
  expect(writes.isCurrent(token, 'b')).toBe(true);
  const next = writes.expect(['b'], 0);
  writes.loadingAll();
  expect(writes.isCurrent(next, 'b')).toBe(false);
  expect(writes.isEcho('b', 1)).toBe(false); // a full load forgets the echoes
});

it('forgets the echo of a failed write, and lets an echo that never came lapse', () => {
  const writes = new OwnWrites();
  writes.failed(writes.expect(['a'], 0));
  expect(writes.isEcho('a', 1)).toBe(false);
  writes.expect(['b'], 0);
  writes.expect(['b'], 5);
  expect(writes.isEcho('b', 5 + ECHO_WINDOW_MS + 1)).toBe(false);
  writes.expect(['c'], 0);
  writes.expect(['c'], 1);
  expect([writes.isEcho('c', 2), writes.isEcho('c', 3), writes.isEcho('c', 4)]).toEqual([true, true, false]);
});
