/**
 * The public boundary's validation: zod schemas in, `ValidationError` out, with
 * every problem's field path and offending value. Nothing past this point
 * re-checks what a schema proved.
 */
import * as z from 'zod/mini';
import type { $strict, $ZodIssue, $ZodLooseShape, $ZodRawIssue } from 'zod/v4/core';
import { ValidationError, messageOf, type ValidationIssue } from './errors.js';

/**
 * The English of the issues tickwork's schemas leave to zod, worded as zod's English
 * locale words them: a value of the wrong type ("Invalid input: expected number,
 * received string") and unknown keys ("Unrecognized key: \"x\""). Every other issue a
 * schema here can raise has a message of its own. zod/mini loads no locale, `z.config()`
 * would change zod's messages for the whole host app, and zod's English locale words
 * every issue zod has (2.7 KB of a bundled app), so these two are worded here and
 * handed to the wording of a failed parse. Anything else reads "Invalid input", as
 * zod words an issue it has no message for.
 */
const ENGLISH = {
  error(issue: $ZodRawIssue): string | undefined {
    if (issue.code === 'invalid_type') return `Invalid input: expected ${issue.expected}, received ${typeName(issue.input)}`;
    if (issue.code === 'unrecognized_keys') return `Unrecognized key${issue.keys.length > 1 ? 's' : ''}: ${issue.keys.map((key) => `"${key}"`).join(', ')}`;
    return undefined;
  },
};

/** What zod's English calls a value's type: `NaN` and `Infinity` by name, an instance by its class (zod's `util.parsedType`). */
function typeName(value: unknown): string {
  if (typeof value === 'number') return Number.isFinite(value) ? 'number' : String(value);
  if (typeof value !== 'object') return typeof value;
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  return Object.getPrototypeOf(value) !== Object.prototype && 'constructor' in value && value.constructor ? (value.constructor as { name: string }).name : 'object';
}

/** What `safeParse` finds: the parsed value, or every issue, worded. */
export type Parsed<T> = { readonly success: true; readonly data: T } | { readonly success: false; readonly issues: readonly $ZodIssue[] };

/**
 * `schema.safeParse(input)`, with English messages if it fails. The input is read once
 * (a getter, a Proxy, a clock's `now()`: what the issues say is what was read); a parse
 * handed an error map runs about ten times slower (zod 4.6, measured), so the English
 * wording is applied to a failed parse's issues only.
 */
export function safeParse<Schema extends z.ZodMiniType>(schema: Schema, input: unknown): Parsed<z.output<Schema>> {
  // What zod's own safeParse does first, keeping the issues raw for the wording.
  const result = schema._zod.run({ value: input, issues: [] }, { async: false });
  if (result instanceof Promise) throw new TypeError('tickwork schemas are synchronous'); // zod's safeParse throws too
  return result.issues.length === 0 ? { success: true, data: result.value as z.output<Schema> } : { success: false, issues: worded(result.issues) };
}

/**
 * Raw issues worded as zod words them (a schema's own message first, then English):
 * a parse of nothing that raises exactly these issues, handed the English error map.
 * zod's function that does it lives in its `util` namespace, which a bundler keeps
 * whole (8.6 KB).
 */
function worded(issues: readonly $ZodRawIssue[]): readonly $ZodIssue[] {
  const replay = z.transform((_nothing: unknown, payload) => {
    payload.issues.push(...issues);
  });
  const result = replay.safeParse(undefined, ENGLISH);
  return result.success ? [] : result.error.issues;
}

/**
 * `z.strictObject(shape)`: unknown keys are issues ("Unrecognized key"). zod/mini's own
 * object parser, key by key: zod's JIT-compiled one (classic `z.object`'s) parses a job
 * definition faster but brings 3 KB more into a bundled app.
 */
export function strictObject<Shape extends $ZodLooseShape>(shape: Shape): z.ZodMiniObject<Shape, $strict> {
  return z.strictObject(shape);
}

/**
 * Parses `input` with `schema`, or throws a `ValidationError` headed by `context`
 * (e.g. `register("nightly")`). Total: input whose getters or Proxy traps throw
 * while the schema reads it is a `ValidationError` too, never the raw exception.
 */
export function parseInput<Schema extends z.ZodMiniType>(schema: Schema, input: unknown, context: string): z.output<Schema> {
  let result: Parsed<z.output<Schema>>;
  try {
    result = safeParse(schema, input);
  } catch (error) {
    throw new ValidationError(context, [{ path: '', message: `could not be read (${messageOf(error)})`, value: undefined }]);
  }
  if (result.success) return result.data;
  throw new ValidationError(
    context,
    result.issues.map((issue): ValidationIssue => ({
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

/**
 * `z.int()`'s rule with its message, without zod's number formats (1 KB of a bundled
 * app): a fraction ends the checks, an integer beyond 2^53 is reported and they go on.
 */
export function integer() {
  return z.superRefine((value: number, ctx) => {
    if (!Number.isSafeInteger(value)) ctx.addIssue({ code: 'custom', message: 'must be an integer', continue: Number.isInteger(value) });
  });
}

/** An integer from `min` to `max`, with the messages every count of the API shares. */
export function integerSchema(min: number, max?: number) {
  const checks = [integer(), z.gte(min, `must be ${min} or more`)];
  return z.number().check(...(max === undefined ? checks : [...checks, z.lte(max, `must be at most ${max}`)]));
}
