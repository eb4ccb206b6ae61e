/**
 * The public boundary's validation: zod schemas in, `ValidationError` out, with
 * every problem's field path and offending value. Nothing past this point
 * re-checks what a schema proved.
 */
import * as z from 'zod/mini';
import { ZodMiniType } from 'zod/mini'; // named: TypeScript calls an assertion (`init`) only through a declared name
// Named, not through `z.core`: a bundler cannot tree-shake a namespace inside a namespace.
import { $constructor, $ZodObjectJIT, type $strict, type $ZodLooseShape } from 'zod/v4/core';
import english from 'zod/v4/locales/en.js';
import { ValidationError, type ValidationIssue } from './errors.js';

/**
 * zod's English messages, for the issues a schema gives no message of its own
 * ("Unrecognized key", "expected number, received string"). zod/mini loads no locale,
 * and `z.config()` would change zod's messages for the whole host app, so they are
 * handed to the parse instead.
 */
const ENGLISH = { error: english().localeError };

/**
 * `schema.safeParse(input)`, with English messages if it fails. A parse handed an
 * error map runs about ten times slower (zod 4.6, measured), so only a failed parse
 * runs again with it.
 */
export function safeParse<Schema extends z.ZodMiniType>(schema: Schema, input: unknown): z.core.util.SafeParseResult<z.output<Schema>> {
  const result = schema.safeParse(input);
  return result.success ? result : schema.safeParse(input, ENGLISH);
}

/**
 * The constructor of `strictObject`: a zod/mini object parsed by zod's JIT-compiled object
 * parser, the one classic `z.object` uses. zod/mini's own parser, key by key, made
 * `register()` about 25 % slower (100,000 jobs); this one costs 2.8 KB of bundle.
 */
const JitObject: $constructor<z.ZodMiniObject> = $constructor('ZodMiniObject', (inst: z.ZodMiniObject, def: z.ZodMiniObject['_zod']['def']) => {
  $ZodObjectJIT.init(inst, def);
  ZodMiniType.init(inst, def);
});

/** `z.strictObject(shape)`: unknown keys are issues ("Unrecognized key"). */
export function strictObject<Shape extends $ZodLooseShape>(shape: Shape): z.ZodMiniObject<Shape, $strict> {
  return new JitObject({ type: 'object', shape, catchall: z.never() }) as z.ZodMiniObject<Shape, $strict>;
}

/** Parses `input` with `schema`, or throws a `ValidationError` headed by `context` (e.g. `register("nightly")`). */
export function parseInput<Schema extends z.ZodMiniType>(schema: Schema, input: unknown, context: string): z.output<Schema> {
  const result = safeParse(schema, input);
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
