/**
 * A plain-text dump of what one tickwork schema holds in the Postgres catalog:
 * tables and their columns, constraints, indexes, and functions (signature,
 * result, volatility and a hash of the body). The schema's own name, and the
 * values derived from it (the notification channel, the sweep lock key), are
 * written as placeholders, so two schemas built by the same migrations dump alike.
 */
import { createHash } from 'node:crypto';
import { sqlNames } from '../../adapters/postgres/sql.js';

interface Client {
  query(text: string, params?: unknown[]): Promise<{ rows: Record<string, unknown>[] }>;
}

export async function catalogDump(client: Client, schema: string): Promise<string> {
  const names = sqlNames(schema);
  const normalize = (text: string): string =>
    text
      .replaceAll(names.channel, '<channel>')
      .replaceAll(names.schema, '<schema>')
      .replaceAll(schema, '<schema>')
      .replaceAll(String(names.sweepLock[1]), '<sweep-key>')
      .replaceAll(String(names.migrationLock[1]), '<migration-key>');
  const lines: string[] = [];
  const columns = await client.query(
    `SELECT c.table_name, c.column_name, c.data_type, c.is_nullable, c.column_default, c.collation_name
       FROM information_schema.columns c WHERE c.table_schema = $1 ORDER BY c.table_name, c.ordinal_position`,
    [schema],
  );
  let table = '';
  for (const row of columns.rows) {
    if (row.table_name !== table) {
      table = String(row.table_name);
      lines.push(`table ${table}`);
    }
    const parts = [`  ${String(row.column_name)} ${String(row.data_type)}`];
    if (row.collation_name !== null) parts.push(`collate ${String(row.collation_name)}`);
    if (row.is_nullable === 'NO') parts.push('not null');
    if (row.column_default !== null) parts.push(`default ${String(row.column_default)}`);
    lines.push(parts.join(' '));
  }
  const constraints = await client.query(
    `SELECT t.relname AS table_name, k.conname, pg_get_constraintdef(k.oid) AS def
       FROM pg_constraint k JOIN pg_class t ON t.oid = k.conrelid JOIN pg_namespace n ON n.oid = t.relnamespace
      WHERE n.nspname = $1 ORDER BY t.relname, k.conname`,
    [schema],
  );
  for (const row of constraints.rows) lines.push(`constraint ${String(row.table_name)}.${String(row.conname)} ${String(row.def)}`);
  const indexes = await client.query(
    `SELECT indexname, indexdef FROM pg_indexes WHERE schemaname = $1 ORDER BY tablename, indexname`,
    [schema],
  );
  for (const row of indexes.rows) lines.push(`index ${String(row.indexname)}: ${String(row.indexdef)}`);
  const functions = await client.query(
    `SELECT p.proname, pg_get_function_identity_arguments(p.oid) AS args, pg_get_function_result(p.oid) AS result,
            p.provolatile, l.lanname, p.prosrc
       FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace JOIN pg_language l ON l.oid = p.prolang
      WHERE n.nspname = $1 ORDER BY p.proname, args`,
    [schema],
  );
  const volatility: Record<string, string> = { i: 'immutable', s: 'stable', v: 'volatile' };
  for (const row of functions.rows) {
    const body = createHash('sha256').update(normalize(String(row.prosrc))).digest('hex').slice(0, 16);
    lines.push(
      `function ${String(row.proname)}(${String(row.args)}) returns ${String(row.result)} ` +
        `${String(row.lanname)} ${volatility[String(row.provolatile)] ?? String(row.provolatile)} body ${body}`,
    );
  }
  return `${normalize(lines.join('\n'))}\n`;
}
