/** `data` at the boundary: validated and copied in one walk, frozen; and copied again for each reader. */
import { describe, expect, it } from 'vitest';
import { describeValue } from '../src/errors.js';
import { MAX_DATA_DEPTH, cloneJson, copyJsonValue } from '../src/json-value.js';

function nested(depth: number): unknown {
  let value: unknown = 'leaf';
  for (let i = 0; i < depth; i += 1) value = [value];
  return value;
}

describe('copyJsonValue', () => {
  it('copies and freezes JSON, so the caller\'s object is never kept', () => {
    const shared = { s: 1 };
    const input = { a: [1, 'two', null, true, { b: shared }], c: shared, d: -0 };
    const copy = copyJsonValue(input);
    if (!('value' in copy)) throw new Error(copy.problem.message);
    expect(copy.value).toEqual({ a: [1, 'two', null, true, { b: { s: 1 } }], c: { s: 1 }, d: 0 });
    expect(Object.is((copy.value as { d: number }).d, 0)).toBe(true);
    expect(Object.isFrozen(copy.value)).toBe(true);
    expect(Object.isFrozen((copy.value as { a: object[] }).a[4])).toBe(true);
    shared.s = 2;
    input.a.push('later');
    expect(copy.value).toEqual({ a: [1, 'two', null, true, { b: { s: 1 } }], c: { s: 1 }, d: 0 }); // a shared (not circular) object is fine
  });

  it('keeps a "__proto__" key as data, as JSON.parse does, without touching any prototype', () => {
    const input = JSON.parse('{"__proto__": {"x": 1}}') as unknown;
    const copy = copyJsonValue(input);
    expect('value' in copy && Object.getPrototypeOf(copy.value)).toBe(Object.prototype);
    expect('value' in copy && JSON.stringify(copy.value)).toBe('{"__proto__":{"x":1}}');
    const clone = cloneJson((copy as { value: { [k: string]: never } }).value);
    expect(JSON.stringify(clone)).toBe('{"__proto__":{"x":1}}');
    expect(Object.getPrototypeOf(clone)).toBe(Object.prototype);
  });

  it(`refuses nesting beyond ${MAX_DATA_DEPTH} levels and cycles, at their path, without overflowing the stack`, () => {
    expect('value' in copyJsonValue(nested(MAX_DATA_DEPTH))).toBe(true);
    const deep = copyJsonValue(nested(MAX_DATA_DEPTH + 1));
    expect('problem' in deep && deep.problem).toEqual({ path: Array(MAX_DATA_DEPTH).fill(0), message: `must not nest more than ${MAX_DATA_DEPTH} levels deep` });
    expect('problem' in copyJsonValue(nested(100_000))).toBe(true);
    const cyclic: { a: unknown[] } = { a: [] };
    cyclic.a.push({ back: cyclic });
    const cycle = copyJsonValue(cyclic);
    expect('problem' in cycle && cycle.problem).toEqual({ path: ['a', 0, 'back'], message: 'must not contain itself (a circular reference)' });
  });

  it('reports what is not JSON, and getters or traps that throw, as problems', () => {
    const problem = (value: unknown) => {
      const copy = copyJsonValue(value);
      return 'problem' in copy ? copy.problem : undefined;
    };
    expect(problem({ a: [NaN] })).toEqual({ path: ['a', 0], message: 'must be a finite number (JSON)' });
    expect(problem({ when: new Date(0) })?.path).toEqual(['when']);
    expect(problem(new Map())?.path).toEqual([]);
    expect(problem(Object.create(null))?.path).toEqual([]);
    expect(problem([undefined])?.path).toEqual([0]);
    expect(problem({ get x() { throw new Error('nope'); } })).toEqual({ path: ['x'], message: 'could not be read (nope)' });
    expect(problem(new Proxy([], { get: () => { throw new Error('trap'); } }))?.message).toBe('could not be read (trap)');
  });
});

describe('cloneJson', () => {
  it('hands out a mutable deep copy of objects, and primitives as they are', () => {
    const frozen = Object.freeze({ a: Object.freeze([1, Object.freeze({ b: 2 })]) });
    const clone = cloneJson(frozen as never) as { a: (number | { b: number })[] };
    expect(clone).toEqual({ a: [1, { b: 2 }] });
    clone.a.push(3);
    (clone.a[1] as { b: number }).b = 5;
    expect(frozen).toEqual({ a: [1, { b: 2 }] });
    for (const value of [null, 0, '', 'text', true, undefined]) expect(cloneJson(value)).toBe(value);
  });
});

describe('describeValue', () => {
  it('shows every value as JavaScript would, never throwing', () => {
    const { proxy, revoke } = Proxy.revocable({}, {});
    revoke();
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    expect([NaN, Infinity, -Infinity, -0, 1e300, 10n, Symbol('s'), undefined, null, () => 1].map(describeValue)).toEqual([
      'NaN', 'Infinity', '-Infinity', '-0', '1e+300', '10n', 'Symbol(s)', 'undefined', 'null', 'a function',
    ]);
    expect(describeValue({ n: NaN, b: 1n, i: -Infinity })).toBe('{"n":"NaN","b":"1n","i":"-Infinity"}');
    expect(describeValue(cyclic)).toBe('[object Object] (not serializable)');
    expect(describeValue(proxy)).toBe('a value that cannot be shown');
    expect(describeValue(new Date(NaN))).toBe('Invalid Date');
    expect(describeValue('x'.repeat(1_000))).toBe(JSON.stringify(`${'x'.repeat(77)}...`));
    expect(describeValue(`${'x'.repeat(76)}😀😀😀`)).toBe(JSON.stringify(`${'x'.repeat(76)}...`)); // never half an emoji
  });
});
