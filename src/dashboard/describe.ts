/**
 * A schedule in words, for the dashboard: small and self-contained rather than a
 * peer such as cronstrue (some 100 KB with its locales) for one line per job. Common
 * shapes read naturally ("every 15 minutes", "at 02:30 on Monday to Friday"); any
 * other expression is read field by field, so every valid expression gets a
 * faithful description, if a plainer one. Only valid expressions reach it (the
 * store holds what `register()` accepted).
 */
import type { ScheduleSpec } from '../store.js';

const MACROS: Readonly<Record<string, string>> = {
  '@yearly': 'once a year, at 00:00 on 1 January',
  '@annually': 'once a year, at 00:00 on 1 January',
  '@monthly': 'once a month, at 00:00 on day 1',
  '@weekly': 'once a week, at 00:00 on Sunday',
  '@daily': 'every day at 00:00',
  '@midnight': 'every day at 00:00',
  '@hourly': 'every hour, at minute 0',
};
const MONTHS = ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December'];
const MONTH_KEYS = MONTHS.map((name) => name.slice(0, 3).toLowerCase());
const WEEKDAYS = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'];
const WEEKDAY_KEYS = WEEKDAYS.map((name) => name.slice(0, 3).toLowerCase());
const ORDINALS = ['', 'first', 'second', 'third', 'fourth', 'fifth'];

export function describeSchedule(schedule: ScheduleSpec): string {
  switch (schedule.kind) {
    case 'at':
      return `once, at ${new Date(schedule.at).toISOString()}`;
    case 'every':
      return `every ${describeDuration(schedule.everyMs).replace(/^1 (\w+)$/, '$1')}`;
    case 'cron':
      return describeCron(schedule.expression);
  }
}

export function describeDuration(ms: number): string {
  const units: [number, string][] = [[86_400_000, 'day'], [3_600_000, 'hour'], [60_000, 'minute'], [1_000, 'second'], [1, 'millisecond']];
  const parts: string[] = [];
  let rest = ms;
  for (const [size, name] of units) {
    const count = Math.floor(rest / size);
    if (count === 0) continue;
    parts.push(`${count} ${name}${count === 1 ? '' : 's'}`);
    rest -= count * size;
  }
  return parts.join(' ') || '0 milliseconds';
}

/** `1h30m`, `90s` → `1m30s`, `250ms`: a duration as `register()` accepts it. */
export function compactDuration(ms: number): string {
  const units: [number, string][] = [[86_400_000, 'd'], [3_600_000, 'h'], [60_000, 'm'], [1_000, 's'], [1, 'ms']];
  let rest = ms;
  let text = '';
  for (const [size, name] of units) {
    const count = Math.floor(rest / size);
    if (count > 0) text += `${count}${name}`;
    rest -= count * size;
  }
  return text || '0ms';
}

export function describeCron(expression: string): string {
  const text = expression.trim();
  if (text.startsWith('@')) return MACROS[text.toLowerCase()] ?? text;
  const parts = text.split(/\s+/);
  const [second, minute, hour, dom, month, dow] = parts.length === 5 ? ['0', ...parts] : parts;
  if (second === undefined || minute === undefined || hour === undefined || dom === undefined || month === undefined || dow === undefined) return text;
  const time = describeTime(second, minute, hour);
  const days = describeDays(dom, dow);
  const months = isAny(month) ? '' : ` in ${list(month, (v) => monthName(v))}`;
  return `${time}${days}${months}`;
}

function isAny(field: string): boolean {
  return field === '*' || field === '?';
}

function isNumber(field: string): boolean {
  return /^\d+$/.test(field);
}

const pad = (value: string): string => value.padStart(2, '0');

function describeTime(second: string, minute: string, hour: string): string {
  const seconds = second === '0' ? '' : isAny(second) ? 'every second' : stepOf(second) ? `every ${stepOf(second)} seconds` : `at second ${list(second)}`;
  if (isNumber(minute) && isNumber(hour)) {
    const at = `at ${pad(hour)}:${pad(minute)}${second === '0' ? '' : isNumber(second) ? `:${pad(second)}` : ''}`;
    return seconds === '' || isNumber(second) ? at : `${seconds}, ${at}`;
  }
  let minutes: string;
  if (isAny(minute)) minutes = seconds === '' ? 'every minute' : seconds + ' of every minute';
  else if (stepOf(minute) !== undefined) minutes = `${seconds === '' ? '' : seconds + ', '}every ${stepOf(minute)} minutes`;
  else minutes = `${seconds === '' ? '' : seconds + ', '}at minute ${list(minute)}`;
  if (isAny(hour)) return minutes === 'at minute 0' ? 'every hour, at minute 0' : minutes;
  if (stepOf(hour) !== undefined) return `${minutes}, every ${stepOf(hour)} hours`;
  return `${minutes} past hour ${list(hour)}`;
}

/** `*\/n` or `0/n`: the step n. */
function stepOf(field: string): string | undefined {
  return /^(?:\*|0)\/(\d+)$/.exec(field)?.[1];
}

function describeDays(dom: string, dow: string): string {
  const anyDom = isAny(dom);
  const anyDow = isAny(dow);
  if (anyDom && anyDow) return ' every day';
  const onDom = anyDom ? '' : `on ${describeDayOfMonth(dom)}`;
  const onDow = anyDow ? '' : `on ${describeDayOfWeek(dow)}`;
  if (anyDom) return ` ${onDow}`;
  if (anyDow) return ` ${onDom}`;
  return ` ${onDom} or ${onDow}`; // classic cron: either one fires
}

function describeDayOfMonth(field: string): string {
  return list(field, (item) => {
    if (item === 'L') return 'the last day of the month';
    if (item === 'LW') return 'the last weekday of the month';
    const nearest = /^(\d+)W$/i.exec(item);
    if (nearest) return `the weekday nearest day ${nearest[1]}`;
    return `day ${item}`;
  });
}

function describeDayOfWeek(field: string): string {
  return list(field, (item) => {
    const nth = /^(\w+)#(\d)$/.exec(item);
    if (nth) return `the ${ORDINALS[Number(nth[2])] ?? nth[2]} ${weekdayName(nth[1] as string)} of the month`;
    const last = /^(\w+)L$/i.exec(item);
    if (last) return `the last ${weekdayName(last[1] as string)} of the month`;
    return weekdayName(item);
  });
}

function monthName(value: string): string {
  const index = isNumber(value) ? Number(value) - 1 : MONTH_KEYS.indexOf(value.toLowerCase());
  return MONTHS[index] ?? value;
}

function weekdayName(value: string): string {
  const index = isNumber(value) ? Number(value) % 7 : WEEKDAY_KEYS.indexOf(value.toLowerCase());
  return WEEKDAYS[index] ?? value;
}

/** A list field (`1,15`, `MON-FRI`, `1-10/2`) in words, each value named by `name`. */
function list(field: string, name: (value: string) => string = (value) => value): string {
  const items = field.split(',').map((item) => {
    const step = /^(.+)\/(\d+)$/.exec(item);
    if (step) {
      const base = step[1] as string;
      const from = isAny(base) ? '' : base.includes('-') ? ` from ${range(base, name)}` : ` from ${name(base)}`;
      return `every ${step[2]}${from}`;
    }
    return item.includes('-') && !/^\w+#|L/.test(item) ? range(item, name) : name(item);
  });
  if (items.length <= 1) return items[0] ?? field;
  return `${items.slice(0, -1).join(', ')} and ${items.at(-1)}`;
}

function range(item: string, name: (value: string) => string): string {
  const [from, to] = item.split('-') as [string, string];
  return `${name(from)} to ${name(to)}`;
}
