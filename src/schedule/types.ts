/** The schedule layer's own types: a schedule's stored form, and the contract every compiled schedule (cron, interval, one-off) fulfils. */

/** A schedule in its stored form: enough for any instance to plan the job. */
export type ScheduleSpec =
  | { readonly kind: 'cron'; readonly expression: string }
  /** `anchor` absent: the job's `createdAt` in the store. */
  | { readonly kind: 'every'; readonly everyMs: number; readonly anchor?: number }
  | { readonly kind: 'at'; readonly at: number };

/**
 * A set of ticks (instants, epoch milliseconds), queried from any reference instant.
 * Pure: nothing reads a clock; both methods describe the SAME tick set, so for every
 * `t`, `latest(t)` is its largest tick `<= t` and `next(t)` its smallest tick `> t`.
 */
export interface Schedule {
  /** First tick strictly after `after`, or undefined when there is none (a one-off that has passed). */
  next(after: number): number | undefined;
  /** Latest tick at or before `at`, or undefined. Costs the same however far back the previous tick is found. */
  latest(at: number): number | undefined;
}
