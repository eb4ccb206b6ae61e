/** Plain-text output of the CLI: aligned tables and key/value blocks, one line per row whatever the values hold. */
import type { JobInfo } from '../src/index.js';

/** A value on one line: control characters (a newline in an error message) shown as spaces. */
export function oneLine(value: string): string {
  // eslint-disable-next-line no-control-regex
  return value.replace(/[\u0000-\u001f\u007f]+/g, ' ');
}

/** A thrown value's message. */
export function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** A user's value in an error message: JSON when it has a JSON form, as JavaScript shows it otherwise, at most 80 characters. */
export function describeValue(value: unknown): string {
  let text: string;
  try {
    text = value === undefined || typeof value === 'function' || typeof value === 'bigint' ? String(value) : (JSON.stringify(value) ?? String(value));
  } catch {
    text = 'a value that cannot be shown';
  }
  return text.length > 80 ? `${text.slice(0, 79)}…` : text;
}

export function table(headers: readonly string[], rows: readonly (readonly string[])[]): string {
  const cells = [headers, ...rows].map((row) => row.map(oneLine));
  const widths = headers.map((_, column) => Math.max(...cells.map((row) => row[column]!.length)));
  return `${cells.map((row) => row.map((cell, column) => (column === row.length - 1 ? cell : cell.padEnd(widths[column]!))).join('  ').trimEnd()).join('\n')}\n`;
}

export function fields(entries: readonly (readonly [string, string])[]): string {
  const width = Math.max(...entries.map(([key]) => key.length));
  return `${entries.map(([key, value]) => `${`${key}:`.padEnd(width + 1)} ${oneLine(value)}`).join('\n')}\n`;
}

export function time(date: Date | undefined): string {
  return date === undefined ? '-' : date.toISOString().replace('.000Z', 'Z');
}

/** A job's schedule as written: the cron expression, `every 90s from <anchor>`, `at <instant>`. */
export function scheduleText(schedule: JobInfo['schedule']): string {
  if (typeof schedule === 'string') return schedule;
  if ('at' in schedule) return `at ${time(schedule.at)}`;
  return `every ${durationText(schedule.every)} from ${time(schedule.anchor)}`;
}

/** Milliseconds as `1h30m`, `90s`, `250ms`. */
export function durationText(ms: number): string {
  if (ms < 1000) return `${ms}ms`;
  const units: [string, number][] = [['d', 86_400_000], ['h', 3_600_000], ['m', 60_000], ['s', 1000], ['ms', 1]];
  let rest = ms;
  let text = '';
  for (const [unit, size] of units) {
    const count = Math.floor(rest / size);
    if (count > 0) text += `${count}${unit}`;
    rest -= count * size;
  }
  return text;
}
