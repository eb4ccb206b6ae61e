/**
 * Retry delays: `min(initialDelay · factor^(k−1), maxDelay)` for retry k, spread by
 * ±jitter·delay. The jitter is a deterministic function of the run ID and attempt,
 * so a run retries at the same instants on every replay of a test, yet retries of
 * different runs spread out.
 */
import type { NormalizedRetry } from './job-definition.js';

/** The wait before retry `retry` (1-based) of run `runId`, in whole milliseconds (a `factor` of 1.1 makes fractions). */
export function retryDelay(policy: NormalizedRetry, retry: number, runId: string): number {
  const base = Math.round(Math.min(policy.initialDelayMs * policy.factor ** (retry - 1), policy.maxDelayMs));
  if (policy.jitter === 0) return base;
  const unit = hashToUnit(`${runId}#${retry}`) * 2 - 1; // in [-1, 1)
  return Math.max(0, Math.round(base + base * policy.jitter * unit));
}

/** FNV-1a over the string, mapped to [0, 1). */
export function hashToUnit(text: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i += 1) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return (hash >>> 0) / 2 ** 32;
}
