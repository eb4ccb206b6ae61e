import { describe, expect, it } from 'vitest';
import { RunAbortedError } from '../src/errors.js';
import { LazyAbort } from '../src/lazy-abort.js';

describe('LazyAbort', () => {
  it('hands out a signal already aborted, with the reason, when asked after the abort', () => {
    const abort = new LazyAbort();
    const error = new RunAbortedError('job.1', 'timeout');
    abort.abort(error);
    expect(abort.signal.aborted).toBe(true);
    expect(abort.signal.reason).toBe(error);
    expect(abort.reason).toBe('timeout');
  });

  it('aborts a signal handed out before, listeners first, then the watcher, once', () => {
    const abort = new LazyAbort();
    const calls: string[] = [];
    abort.signal.addEventListener('abort', () => calls.push(`listener:${(abort.signal.reason as RunAbortedError).reason}`));
    abort.watch(() => calls.push(`watcher:${abort.reason}`));
    expect(abort.aborted).toBe(false);
    abort.abort(new RunAbortedError('job.1', 'replaced'));
    abort.abort(new RunAbortedError('job.1', 'shutdown'));
    expect(calls).toEqual(['listener:replaced', 'watcher:replaced']);
    expect(abort.reason).toBe('replaced');
  });

  it('calls a watcher set after the abort at once', () => {
    const abort = new LazyAbort();
    abort.abort(new RunAbortedError('job.1', 'lease-lost'));
    let called = 0;
    abort.watch(() => (called += 1));
    expect(called).toBe(1);
  });
});
