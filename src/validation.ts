/**
 * The public boundary's validation: zod schemas in, `ValidationError` out, with
 * every problem's field path and offending value. Nothing past this point
 * re-checks what a schema proved.
 */
import * as z from 'zod/mini';
import { ZodMiniType } from 'zod/mini'; // named: TypeScript calls an assertion (`init`) only through a declared name
// Named, not through `z.core`: a bundler cannot tree-shake a namespace inside a namespace.
import { $constructor, type $strict, type $ZodIssue, type $ZodLooseShape, type $ZodRawIssue, type ParsePayload } from 'zod/v4/core';
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

interface Field {
  readonly run: z.ZodMiniType['_zod']['run'];
  /** Absent with issues: ignored (optional in and out). */
  readonly skip: boolean;
  /** Absent and passed by its schema: "nonoptional". */
  readonly required: boolean;
  /** Absent: its value is kept always, never, or when defined (undefined). */
  readonly keep: boolean | undefined;
}

/** What zod's object parser does with one key's result (the compiled parser does the common cases inline). */
function settle(payload: ParsePayload, result: Record<string, unknown>, key: string, field: Field, parsed: ParsePayload, present: boolean): void {
  if (!present && field.skip && parsed.issues.length > 0) return;
  for (const issue of parsed.issues) {
    (issue as { path?: PropertyKey[] }).path = issue.path === undefined ? [key] : [key, ...issue.path];
    payload.issues.push(issue);
  }
  if (!present && field.required && parsed.issues.length === 0) payload.issues.push({ code: 'invalid_type', expected: 'nonoptional', input: undefined, path: [key] });
  if (present || (field.keep ?? parsed.value !== undefined)) result[key] = parsed.value;
}

type ParseKeys = (input: Record<string, unknown>, payload: ParsePayload, ctx: object | undefined) => Record<string, unknown>;

/**
 * The keys' parser, compiled for the shape as zod's JIT parser is: each key read, tested and
 * written by its name, which made `parseJobDefinition` about 1.7x faster than a loop over the
 * keys (reading and writing them by a variable name), as fast as zod's. Where code generation
 * is disallowed (`--disallow-code-generation-from-strings`, a CSP), that loop.
 */
function keysParser(keys: readonly string[], fields: readonly Field[]): ParseKeys {
  try {
    const code = keys.map((key, i) => {
      const name = JSON.stringify(key);
      const { keep, required } = fields[i]!;
      const settleIt = `S(payload,out,${name},F[${i}],r,p)`;
      // Passed: kept when present (or absent and kept), else only a required key has more to say; issues: settle.
      return `r=F[${i}].run({value:input[${name}],issues:[]},ctx);p=${name} in input;if(r.issues.length===0){if(p${keep === true ? '||1' : keep === undefined ? '||r.value!==undefined' : ''})out[${name}]=r.value;${required ? `else ${settleIt}` : ''}}else ${settleIt};`;
    });
    // Built from the shape's own key names, quoted by JSON.stringify.
    return new Function('F', 'S', `return(input,payload,ctx)=>{let r,p;const out={};${code.join('')}return out}`)(fields, settle) as ParseKeys;
  } catch {
    return (input, payload, ctx) => {
      const out: Record<string, unknown> = {};
      keys.forEach((key, i) => settle(payload, out, key, fields[i]!, fields[i]!.run({ value: input[key], issues: [] }, ctx as never) as ParsePayload, key in input));
      return out;
    };
  }
}

/**
 * `strictObject`'s parser, written here: zod's objects (its JIT-compiled parser, which
 * classic `z.object` uses, and zod/mini's own, key by key, which made `register()` about
 * 25 % slower) bring 3 KB into a bundled app for what tickwork needs of them. It does what
 * zod's JIT parser does with the same issues, in the same order: each key of the shape
 * (an absent key is read as `undefined`; an optional one that is absent is left out, its
 * issues ignored; a required one that its schema passes absent is "nonoptional"), then the
 * input's unknown keys in one "unrecognized_keys" issue. Synchronous only, like every
 * tickwork schema.
 */
const StrictObject = $constructor('TickworkStrictObject', (inst: z.ZodMiniType, def: { type: 'object'; shape: $ZodLooseShape }) => {
  ZodMiniType.init(inst, def as never);
  const keys = Object.keys(def.shape);
  const known = new Set(keys);
  let parseKeys: ParseKeys | undefined;
  inst._zod.parse = (payload, ctx) => {
    const input = payload.value as Record<string, unknown>;
    if (typeof input !== 'object' || input === null || Array.isArray(input)) {
      payload.issues.push({ code: 'invalid_type', expected: 'object', input, inst });
      return payload;
    }
    // Built at the first parse, as zod does: a schema's optin may be worked out lazily.
    parseKeys ??= keysParser(
      keys,
      keys.map((key): Field => {
        const { run, optin, optout } = (def.shape[key] as z.ZodMiniType)._zod;
        const optionalOut = optout === 'optional';
        return { run, skip: optin !== undefined && optionalOut, required: optin === undefined, keep: optin === 'defaulted' ? (optionalOut ? undefined : true) : optin !== undefined && !optionalOut ? undefined : false };
      }),
    );
    const result = parseKeys(input, payload, ctx);
    const unknown: string[] = [];
    for (const key in input) if (!known.has(key)) unknown.push(key);
    if (unknown.length > 0) payload.issues.push({ code: 'unrecognized_keys', keys: unknown, input, inst, continue: true });
    payload.value = result;
    return payload;
  };
});

/** `z.strictObject(shape)`: unknown keys are issues ("Unrecognized key"). */
export function strictObject<Shape extends $ZodLooseShape>(shape: Shape): z.ZodMiniObject<Shape, $strict> {
  return new StrictObject({ type: 'object', shape }) as unknown as z.ZodMiniObject<Shape, $strict>;
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
