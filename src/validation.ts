/**
 * The public boundary's validation: zod schemas in, `ValidationError` out, with
 * every problem's field path and offending value. Nothing past this point
 * re-checks what a schema proved.
 */
import type { z } from 'zod';
import { ValidationError, messageOf, type ValidationIssue } from './errors.js';

/**
 * Parses `input` with `schema`, or throws a `ValidationError` headed by `context`
 * (e.g. `register("nightly")`). Total: input whose getters or Proxy traps throw
 * while the schema reads it is a `ValidationError` too, never the raw exception.
 */
export function parseInput<Schema extends z.ZodType>(schema: Schema, input: unknown, context: string): z.output<Schema> {
  let result: z.ZodSafeParseResult<z.output<Schema>>;
  try {
    result = schema.safeParse(input);
  } catch (error) {
    throw new ValidationError(context, [{ path: '', message: `could not be read (${messageOf(error)})`, value: undefined }]);
  }
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
  try {
    for (const key of path) {
      if (value === null || typeof value !== 'object') return undefined;
      value = (value as Record<PropertyKey, unknown>)[key];
    }
  } catch {
    return undefined;
  }
  return value;
}
