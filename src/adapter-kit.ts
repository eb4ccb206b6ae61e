/**
 * What the first-party adapters (memory, Redis, Postgres) borrow from the core, in
 * one place: validating their options into `ValidationError`s, loading their optional
 * driver, a bounded memo, slicing calls into batches (`batchesOf`), and the draft type
 * their record builders use. Besides this module an adapter imports only the storage contract (`store.ts`), its rules
 * (`store-rules.ts`) and `errors.ts`; `npm run lint:deps` (.dependency-cruiser.cjs)
 * fails on any other import of `src/`. Not a public entry: third-party adapters bring
 * their own.
 */
export { batchesOf } from './batches.js';
export type { Draft } from './draft.js';
export { requireDriver } from './driver.js';
export { jobRecord, sharedParts } from './job-record.js';
export { Memo } from './schedule/memo.js';
export { parseInput } from './validation.js';
export { DEFAULT_PARTITIONS, partitionsSchema } from './partition-option.js';
export { parseRunId } from './run-id.js';
