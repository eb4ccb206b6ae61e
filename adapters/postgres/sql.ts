/**
 * SQL naming for one store: the validated schema name quoted as an identifier, the
 * LISTEN/NOTIFY channel derived from it, and the advisory-lock key that serializes
 * its migrations. Nothing else user-supplied ever reaches SQL text: every value
 * travels as a parameter.
 */

/** What a schema name may look like: a lowercase, unquoted-safe Postgres identifier (at most 63 bytes). */
export const SCHEMA_NAME_PATTERN = /^[a-z_][a-z0-9_]{0,62}$/;

/** Postgres truncates identifiers, channel names included, beyond 63 bytes. */
const MAX_IDENTIFIER_LENGTH = 63;

/** First key of every tickwork advisory lock ('tick' in ASCII), so we never collide with an app's own keys. */
const ADVISORY_LOCK_CLASS = 0x7469636b;

export interface SqlNames {
  /** The schema as given (already validated). */
  readonly schemaName: string;
  /** The schema quoted as an identifier, ready to prefix table and function names. */
  readonly schema: string;
  /** The LISTEN/NOTIFY channel, made of `[a-z0-9_]` only. */
  readonly channel: string;
  /** The two int4 keys of `pg_advisory_xact_lock` that serialize this schema's migrations. */
  readonly migrationLock: readonly [number, number];
  /**
   * The two int4 keys of the transaction lock that serializes this schema's sweeps
   * (recovery, pending timeouts, TTL deletion) and batch upserts: the only operations
   * that lock several jobs' rows, so one at a time cannot deadlock with another.
   */
  readonly sweepLock: readonly [number, number];
}

/** Quotes an identifier the way Postgres' `quote_ident` does. */
export function quoteIdent(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}

/** FNV-1a over the UTF-16 code units, as a signed 32-bit integer (an int4 advisory-lock key). */
export function hash32(text: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i += 1) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return hash | 0;
}

/**
 * `tickwork_events_<schema>`, or, when that would pass 63 bytes, a prefix of it plus
 * a hash of the whole schema name so that long schema names stay distinct.
 */
export function channelName(schemaName: string): string {
  const full = `tickwork_events_${schemaName}`;
  if (full.length <= MAX_IDENTIFIER_LENGTH) return full;
  const suffix = `_${(hash32(schemaName) >>> 0).toString(16).padStart(8, '0')}`;
  return full.slice(0, MAX_IDENTIFIER_LENGTH - suffix.length) + suffix;
}

/** The names for a schema; `schemaName` must already match {@link SCHEMA_NAME_PATTERN}. */
export function sqlNames(schemaName: string): SqlNames {
  if (!SCHEMA_NAME_PATTERN.test(schemaName)) throw new Error(`invalid schema name ${JSON.stringify(schemaName)}`);
  return {
    schemaName,
    schema: quoteIdent(schemaName),
    channel: channelName(schemaName),
    migrationLock: [ADVISORY_LOCK_CLASS, hash32(schemaName)],
    sweepLock: [ADVISORY_LOCK_CLASS, hash32(`sweep:${schemaName}`)],
  };
}
