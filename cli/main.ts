#!/usr/bin/env node
/** The `tickwork` bin: runs the command line on this process's arguments, streams and terminal. */
import { createInterface } from 'node:readline/promises';
import { runCli } from './run.js';

async function confirm(question: string): Promise<boolean> {
  const terminal = createInterface({ input: process.stdin, output: process.stderr });
  try {
    return /^y(es)?$/i.test((await terminal.question(question)).trim());
  } finally {
    terminal.close();
  }
}

void runCli(process.argv.slice(2), {
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
  env: process.env,
  confirm: process.stdin.isTTY ? confirm : undefined,
}).then((code) => {
  process.exitCode = code;
  // A connection that lingers after close() must not keep the command from exiting.
  setTimeout(() => process.exit(code), 1_000).unref();
});
