/**
 * `data`: the JSON values a job or a manual trigger hands its runs. The public
 * boundary validates a value and takes a frozen copy of it in one walk, so that
 * nothing the caller does to its object afterwards reaches the scheduler or a
 * store; each attempt hands its handler a fresh copy, so that nothing a handler
 * does to `ctx.data` reaches a later run. Every store thus gives a run the data
 * it was given, the memory store (which keeps objects, not text) included.
 */
import { messageOf } from './errors.js';
import type { JsonValue } from './store.js';

/**
 * How deeply `data` may nest (objects and arrays inside one another). Far beyond
 * any real payload, far below the stack depth that serializing, storing and
 * parsing it needs on every store (Redis' cjson stops at 1000).
 */
export const MAX_DATA_DEPTH = 64;

export interface JsonProblem {
  readonly path: readonly PropertyKey[];
  readonly message: string;
}

/**
 * A frozen copy of `value` if it is JSON (strings, finite numbers, booleans, null,
 * arrays and plain objects, nested at most `MAX_DATA_DEPTH` deep, no cycles), or
 * the first problem found, at its path. Total: a getter or a Proxy trap that throws
 * is a problem too, never an exception.
 */
export function copyJsonValue(value: unknown): { readonly value: JsonValue } | { readonly problem: JsonProblem } {
  const path: PropertyKey[] = [];
  try {
    const copy = copyAt(value, path, new Set());
    return copy instanceof Problem ? { problem: copy.problem } : { value: copy };
  } catch (error) {
    return { problem: { path: [...path], message: `could not be read (${messageOf(error)})` } };
  }
}

/** A problem travels up the walk as this, so that no JSON value can be mistaken for it. */
class Problem {
  constructor(readonly problem: JsonProblem) {}
}

const NOT_JSON = 'must be a JSON value (string, finite number, boolean, null, array or plain object)';

/** `path` is the walk's current path (pushed and popped in place); `ancestors` the objects above it. */
function copyAt(value: unknown, path: PropertyKey[], ancestors: Set<object>): JsonValue | Problem {
  if (value === null || typeof value === 'string' || typeof value === 'boolean') return value;
  if (typeof value === 'number') {
    // `+ 0`: -0 is 0, as it is once any store has written it as JSON.
    return Number.isFinite(value) ? value + 0 : new Problem({ path: [...path], message: 'must be a finite number (JSON)' });
  }
  if (typeof value !== 'object') return new Problem({ path: [...path], message: NOT_JSON });
  const isArray = Array.isArray(value);
  if (!isArray && Object.getPrototypeOf(value) !== Object.prototype) return new Problem({ path: [...path], message: NOT_JSON });
  if (ancestors.has(value)) return new Problem({ path: [...path], message: 'must not contain itself (a circular reference)' });
  if (ancestors.size >= MAX_DATA_DEPTH) {
    return new Problem({ path: [...path], message: `must not nest more than ${MAX_DATA_DEPTH} levels deep` });
  }
  ancestors.add(value);
  let copy: JsonValue[] | { [key: string]: JsonValue };
  if (isArray) {
    const items = value as unknown[];
    const array: JsonValue[] = [];
    for (let index = 0; index < items.length; index += 1) {
      path.push(index);
      const item = copyAt(items[index], path, ancestors);
      path.pop();
      if (item instanceof Problem) return item;
      array.push(item);
    }
    copy = array;
  } else {
    const object: { [key: string]: JsonValue } = {};
    for (const key of Object.keys(value)) {
      path.push(key);
      const item = copyAt((value as Record<string, unknown>)[key], path, ancestors);
      path.pop();
      if (item instanceof Problem) return item;
      // defineProperty, not assignment: a key "__proto__" stays data, as JSON.parse keeps it.
      Object.defineProperty(object, key, { value: item, enumerable: true, writable: true, configurable: true });
    }
    copy = object;
  }
  ancestors.delete(value);
  Object.freeze(copy);
  return copy;
}

/**
 * A mutable copy of a JSON value for one reader (a handler's `ctx.data`, a `RunInfo`):
 * primitives as they are, at no cost, so a run without object data pays nothing.
 */
export function cloneJson<T extends JsonValue | undefined>(value: T): T {
  if (typeof value !== 'object' || value === null) return value;
  return cloneObject(value) as T;
}

function cloneObject(value: JsonValue[] | { [key: string]: JsonValue }): JsonValue {
  if (Array.isArray(value)) {
    const array: JsonValue[] = new Array<JsonValue>(value.length);
    for (let index = 0; index < value.length; index += 1) {
      const item = value[index] as JsonValue;
      array[index] = typeof item === 'object' && item !== null ? cloneObject(item) : item;
    }
    return array;
  }
  const object: { [key: string]: JsonValue } = {};
  for (const key of Object.keys(value)) {
    const item = value[key] as JsonValue;
    const copy = typeof item === 'object' && item !== null ? cloneObject(item) : item;
    if (key === '__proto__') Object.defineProperty(object, key, { value: copy, enumerable: true, writable: true, configurable: true });
    else object[key] = copy;
  }
  return object;
}
