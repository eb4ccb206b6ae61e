/**
 * Not part of the suite: test/setup/process-guard.test.ts runs this file in a vitest
 * of its own, with the suite's setup files, and checks which of these tests fail.
 */
import { it } from 'vitest';

it('passes: a rejection that is handled', async () => {
  await Promise.reject(new Error('handled')).catch(() => {});
});

it('fails: an unhandled rejection', () => {
  void Promise.reject(new Error('escaped rejection'));
});

it('fails: an uncaught exception in a timer', async () => {
  setTimeout(() => {
    throw new Error('escaped exception');
  }, 0);
  await new Promise((resolve) => setTimeout(resolve, 5));
});

it('passes: the next test starts clean', () => {});
