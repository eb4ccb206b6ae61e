/**
 * tickwork's object parser (`strictObject`, src/validation.ts) parses and reports as zod's
 * own does, compiled for its shape and, where code generation is disallowed, by its loop.
 */
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { expect, it } from 'vitest';
import { differences } from './strict-object-cases.js';

const run = promisify(execFile);

it("parses and reports as zod's z.strictObject does (compiled parser)", () => {
  expect(differences()).toEqual([]);
});

it('does the same where code generation is disallowed (the loop)', async () => {
  const fixture = fileURLToPath(new URL('./strict-object.fixture.ts', import.meta.url));
  const { stdout } = await run(process.execPath, ['--disallow-code-generation-from-strings', '--import', 'tsx', fixture], { timeout: 30_000 });
  expect(JSON.parse(stdout)).toEqual([]);
});
