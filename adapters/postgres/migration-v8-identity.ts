/**
 * Migration 8: the identity of the schema's data (`Store.identity`). One row, made
 * with the table: a schema dropped and created again (by the store's next call,
 * which migrates it afresh) has a new identity, and the scheduler writes its jobs
 * again. Append-only, like every migration.
 */
import type { SqlNames } from './sql.js';

export const IDENTITY_V8_MIGRATION = (n: SqlNames): string => `
CREATE TABLE ${n.schema}.store_identity (
  singleton boolean PRIMARY KEY DEFAULT true CHECK (singleton),
  identity text NOT NULL
);
INSERT INTO ${n.schema}.store_identity (identity) VALUES (gen_random_uuid()::text);
`;
