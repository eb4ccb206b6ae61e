/**
 * `strictObject` (src/validation.ts, tickwork's own object parser) against zod's own
 * `z.strictObject` as the oracle: the same shapes and inputs through both, and every
 * difference in what they parse (keys present included) or the issues they raise. Used by
 * strict-object.test.ts in the test process (the compiled parser) and, through
 * strict-object.fixture.ts, in a process that disallows code generation (the loop).
 */
import * as z from 'zod/mini';
import { safeParse, strictObject } from '../src/validation.js';

const SHAPES = {
  required: { a: z.string(), b: z.number() },
  transform: { at: z.transform((value: unknown, payload) => (typeof value === 'string' ? value.length : (payload.issues.push({ code: 'custom', message: 'must be text', input: value }), z.NEVER))) },
  optional: { a: z.optional(z.string()), b: z.optional(z.transform((value: unknown) => (value === undefined ? 'made' : value))) },
  defaulted: { a: z._default(z.number(), 7), b: z.optional(z._default(z.string(), 'x')) },
  nested: { inner: z.optional(z.strictObject({ n: z._default(z.number(), 1) })), custom: z.custom<number>((value) => value === 1, 'must be 1') },
};

const INPUTS: unknown[] = [
  {}, { a: 'x', b: 1 }, { a: 1, b: 'x' }, { a: undefined }, { a: undefined, b: undefined }, { at: 'xy' }, { at: 5 }, { at: undefined },
  { a: 'x', b: 1, extra: 1 }, { extra: 1, other: 2 }, { inner: {} }, { inner: { n: 'x', q: 1 }, custom: 1 }, { inner: null, custom: 2 },
  { constructor: 1 }, Object.create({ inherited: 1 }), JSON.parse('{"__proto__": 1}'), null, undefined, 3, 'text', [], [1],
];

/** The differences between tickwork's strictObject and zod's on every shape and input; empty when they agree. */
export function differences(): string[] {
  const found: string[] = [];
  const show = (x: unknown): string => JSON.stringify(x, (_key, value: unknown) => (value === undefined ? '<undefined>' : value));
  for (const [name, shape] of Object.entries(SHAPES)) {
    const ours = strictObject(shape as z.core.$ZodLooseShape);
    const zods = z.strictObject(shape as z.core.$ZodLooseShape);
    for (const input of INPUTS) {
      // Twice: the compiled parser is built at the first parse.
      for (let round = 0; round < 2; round += 1) {
        const a = safeParse(ours, input);
        const b = safeParse(zods, input);
        const seen = (r: typeof a) => show(r.success ? { data: r.data, keys: Object.keys(r.data as object) } : r.issues.map(({ code, path, message }) => ({ code, path, message })));
        if (seen(a) !== seen(b)) found.push(`${name} ${show(input)}: ours ${seen(a)}, zod's ${seen(b)}`);
      }
    }
  }
  return found;
}
