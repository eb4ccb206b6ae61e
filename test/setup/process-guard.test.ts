import { execFile } from 'node:child_process';
import { readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, it } from 'vitest';

interface JsonReport {
  testResults: { assertionResults: { title: string; status: string; failureMessages: string[] }[] }[];
}

it('fails the very test during which an unhandled rejection or an uncaught exception happened', async () => {
  const output = join(tmpdir(), `tickwork-guard-${process.pid}-${Date.now()}.json`);
  try {
    // A vitest of its own: the failures it provokes must not reach this process.
    await new Promise<void>((resolve) => {
      execFile(
        process.execPath,
        ['node_modules/vitest/vitest.mjs', 'run', '--config', 'test/setup/process-guard.fixture.config.ts', '--reporter=json', `--outputFile=${output}`],
        { env: { ...process.env, CI: '' }, timeout: 60_000 },
        () => resolve(), // it exits non-zero: the report says why
      );
    });
    const report = JSON.parse(await readFile(output, 'utf8')) as JsonReport;
    const results = report.testResults.flatMap((file) => file.assertionResults);
    const status = Object.fromEntries(results.map((result) => [result.title, result.status]));
    expect(status).toEqual({
      'passes: a rejection that is handled': 'passed',
      'fails: an unhandled rejection': 'failed',
      'fails: an uncaught exception in a timer': 'failed',
      'passes: the next test starts clean': 'passed',
    });
    const message = (title: string): string => results.find((result) => result.title === title)?.failureMessages.join('\n') ?? '';
    expect(message('fails: an unhandled rejection')).toMatch(/unhandled rejection \(Error: escaped rejection\) during this test/);
    expect(message('fails: an uncaught exception in a timer')).toMatch(/uncaught exception \(Error: escaped exception\) during this test/);
  } finally {
    await rm(output, { force: true });
  }
});
