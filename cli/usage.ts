/** The CLI's help text and its one error of its own: bad usage (exit code 2). */

/** The command line is wrong (unknown command or flag, a missing or malformed argument): exit code 2. */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}

export const HELP = `Usage: tickwork <command> [arguments] [options]

Commands on a store (jobs registered by your apps):
  jobs                                  list the jobs
  job <name>                            one job, with its next ticks
  runs <name> [--status s] [--limit n]  its runs, newest first (status: pending, running,
                                        succeeded, failed, cancelled; repeatable)
  trigger <name> [--data JSON] [--key K]  a manual run now (--key: idempotency key)
  pause <name> | resume <name>          set or clear the job's suspend flag
  backfill <name> --from T --to T       a run for every tick in [from, to]
  remove <name> [--yes]                 delete the job and its history (asks first)
  dashboard [--port n] [--host h] [--token T]
                                        serve the web dashboard (port 8080 on 127.0.0.1;
                                        read-only unless --token or TICKWORK_DASHBOARD_TOKEN
                                        is set: then HTTP Basic auth, the token as password)

Without a store:
  preview "<schedule>" [--tz Z] [--count n] [--from T]
                                        the next ticks of a cron expression (or
                                        '{"every":"90s"}', '{"at":"2026-06-01"}'),
                                        marking ticks shifted by a DST gap or in a
                                        repeated hour

Store (or TICKWORK_REDIS_URL / TICKWORK_DATABASE_URL):
  --redis URL [--prefix P]              a Redis store (prefix: default "tickwork")
  --postgres URL [--schema S]           a Postgres store (schema: default "tickwork")
  --partitions N                        the store's partition count, when its apps
                                        give one (default 12)

Output: tables for people; --json for scripts. Times are ISO-8601 (UTC).
Exit codes: 0 ok, 1 failure (store, job not found, refused), 2 bad usage.
`;
