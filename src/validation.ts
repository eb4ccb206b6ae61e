/**
 * The public boundary's validation: zod schemas in, `ValidationError` out, with
 * every problem's field path and offending value. Nothing past this point
 * re-checks what a schema proved.
 */
import type { z } from 'zod';
import { ValidationError, type ValidationIssue } from './errors.js';

/** Parses `input` with `schema`, or throws a `ValidationError` headed by `context` (e.g. `register("nightly")`). */
export function parseInput<Schema extends z.ZodType>(schema: Schema, input: unknown, context: string): z.output<Schema> {
  const result = schema.safeParse(input);
  if (result.success) return result.data;
  throw new ValidationError(
    context,
    result.error.issues.map((issue): ValidationIssue => ({
      path: issue.path.map(String).join('.'),
      message: issue.message,
      value: valueAt(input, issue.path),
    })),
  );
}

function valueAt(input: unknown, path: readonly PropertyKey[]): unknown {
  let value = input;
  for (const key of path) {
    if (value === null || typeof value !== 'object') return undefined;
    value = (value as Record<PropertyKey, unknown>)[key];
  }
  return value;
}
