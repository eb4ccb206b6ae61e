/**
 * Cron expressions: syntax, validation and messages. The only module that imports
 * cron-parser, which parses each field; matching is done by `calendar.ts` and the
 * mapping to instants by `cron-schedule.ts`, because cron-parser's own iteration
 * gets daylight-saving days wrong (see cron-schedule.ts).
 *
 * Accepted: 5 fields (minute hour day-of-month month day-of-week) or 6 (a leading
 * seconds field); `*`, `?`, ranges, steps, lists, month and weekday names; `L`, `nW`
 * and `LW` in day-of-month; `nL` and `n#k` in day-of-week; the macros below.
 */
// cron-parser's parser module, not its index: the index also loads CronFileParser (crontab
// files through node:fs), which tickwork never calls and a bundler cannot leave out of a
// CommonJS package (2.2 KB of a bundled app). Typed in cron-parser-module.d.ts.
import { CronExpressionParser } from 'cron-parser/dist/CronExpressionParser.js';
import { CronCalendar, type CronFields } from './calendar.js';

const MACROS: Readonly<Record<string, string>> = {
  '@yearly': '0 0 1 1 *',
  '@annually': '0 0 1 1 *',
  '@monthly': '0 0 1 * *',
  '@weekly': '0 0 * * 0',
  '@daily': '0 0 * * *',
  '@midnight': '0 0 * * *',
  '@hourly': '0 * * * *',
};

const MONTH_ALIASES = ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec'];
const WEEKDAY_ALIASES = ['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat'];
const FIELD_NAMES = ['second', 'minute', 'hour', 'day-of-month', 'month', 'day-of-week'] as const;
const MONTH_NAMES = ['', 'January', 'February', 'March', 'April', 'May', 'June', 'July', 'August',
  'September', 'October', 'November', 'December'];

/** A cron expression ready for matching. */
export interface ParsedCron {
  readonly fields: CronFields;
  readonly calendar: CronCalendar;
  /**
   * The hour field is `*`, `?` or a step: the schedule follows real elapsed time and
   * fires in both occurrences of a repeated (fall-back) hour.
   */
  readonly followsElapsedTime: boolean;
}

/** Parses and validates; the `problem` is a human message naming the field. */
export function parseCron(expression: string): { readonly cron: ParsedCron } | { readonly problem: string } {
  if (typeof expression !== 'string') return { problem: 'a cron expression must be a string' };
  const text = expression.trim();
  if (text === '') return { problem: 'empty cron expression' };
  let source = text;
  if (text.startsWith('@')) {
    const macro = MACROS[text.toLowerCase()];
    if (macro === undefined) {
      return { problem: `unknown macro ${JSON.stringify(text)}; use one of ${Object.keys(MACROS).join(' ')}` };
    }
    source = macro;
  }
  const parts = source.split(/\s+/);
  if (parts.length !== 5 && parts.length !== 6) {
    return {
      problem: `expected 5 fields (minute hour day-of-month month day-of-week) or 6 (with leading seconds), got ${parts.length}`,
    };
  }
  const raw = parts.length === 5 ? ['0', ...parts] : parts;
  // What cron-parser gets: `nW`/`LW` taken out of day-of-month (it does not know them).
  const cleaned = [...raw];
  for (let index = 0; index < 6; index++) {
    const field = raw[index]!;
    const name = FIELD_NAMES[index]!;
    if (index === 4 || index === 5) {
      const names = index === 4 ? MONTH_ALIASES : WEEKDAY_ALIASES;
      const unknown = (field.match(/[a-z]+/gi) ?? []).find((word) => !names.includes(word.toLowerCase()));
      if (unknown !== undefined && !(index === 5 && unknown === 'L')) {
        return { problem: `${name} field: unknown name ${JSON.stringify(unknown)} (use ${index === 4 ? 'JAN-DEC' : 'SUN-SAT'})` };
      }
    } else if (/h/i.test(field)) {
      // cron-parser's H picks pseudo-random values; instances must agree on ticks.
      return { problem: `${name} field: hashed values (H) are not supported (in ${JSON.stringify(field)})` };
    }
  }
  const special = splitWeekdayItems(raw[3]!);
  if (typeof special === 'string') return { problem: `day-of-month field: ${special}` };
  const nearestWeekdays = special.nearest;
  const lastWeekdayOfMonth = special.last;
  cleaned[3] = special.rest;
  cleaned[5] = cleaned[5]!.replace(/-sun\b/i, '-7'); // `mon-sun`, as in classic cron
  // One parse of the whole expression is the common case; field by field only to name
  // the field at fault, or to accept what cron-parser alone rejects (overlapping lists,
  // a day-of-month absent from the months, which gets our own "never fires" message).
  const parsed = parseWhole(cleaned) ?? parseByField(cleaned, raw);
  if (typeof parsed === 'string') return { problem: parsed };
  const values = parsed.values.map((field, index) =>
    unique(field.filter((v) => typeof v === 'number').map((v) => (index === 5 ? v % 7 : v))),
  );
  const lastDayOfMonth = parsed.values[3]!.includes('L');
  const lastDaysOfWeek = unique(parsed.values[5]!.filter((v) => typeof v === 'string').map((v) => parseInt(v, 10) % 7));
  const nthDayOfWeek = parsed.nth;
  const fields: CronFields = {
    seconds: values[0]!,
    minutes: values[1]!,
    hours: values[2]!,
    daysOfMonth: values[3]!,
    months: values[4]!,
    daysOfWeek: values[5]!,
    lastDayOfMonth,
    nearestWeekdays,
    lastWeekdayOfMonth,
    lastDaysOfWeek,
    nthDayOfWeek,
    dayOfMonthRestricted: !isWildcard(raw[3]!),
    dayOfWeekRestricted: !isWildcard(raw[5]!),
  };
  const calendar = new CronCalendar(fields);
  if (!calendar.canFire) return { problem: neverFires(fields) };
  return { cron: { fields, calendar, followsElapsedTime: /[*?/]/.test(raw[2]!) } };
}

/**
 * Validates a cron expression (and, when given, a time zone); undefined when both are
 * fine, else a human message such as "minute field: 61 is out of range 0-59".
 */
function isWildcard(field: string): boolean {
  return field === '*' || field === '?';
}

/** Takes `nW` and `LW` out of a day-of-month list: cron-parser does not know them. */
function splitWeekdayItems(field: string): { nearest: number[]; last: boolean; rest: string } | string {
  const nearest: number[] = [];
  let last = false;
  const rest: string[] = [];
  for (const item of field.split(',')) {
    const match = /^(\d+|L)W$/i.exec(item);
    if (match === null) {
      rest.push(item);
    } else if (match[1]!.toUpperCase() === 'L') {
      last = true;
    } else {
      const day = Number(match[1]);
      if (day < 1 || day > 31) return `${item} is out of range 1-31`;
      nearest.push(day);
    }
  }
  return { nearest, last, rest: rest.join(',') };
}

type FieldValues = (number | string)[];
interface ParsedFields {
  readonly values: readonly FieldValues[];
  readonly nth: number;
}

function parseWhole(fields: readonly string[]): ParsedFields | undefined {
  if (fields[3] === '') return undefined;
  try {
    // A fixed currentDate spares cron-parser from reading the clock.
    const parsed = CronExpressionParser.parse(fields.join(' '), { tz: 'UTC', currentDate: 0 }).fields;
    return {
      values: [parsed.second, parsed.minute, parsed.hour, parsed.dayOfMonth, parsed.month, parsed.dayOfWeek].map(
        (field) => [...field.values],
      ),
      nth: parsed.dayOfWeek.nthDay,
    };
  } catch {
    return undefined;
  }
}

function parseByField(fields: readonly string[], raw: readonly string[]): ParsedFields | string {
  const values: FieldValues[] = [];
  let nth = 0;
  for (let index = 0; index < 6; index++) {
    // Day-of-month made only of nW/LW items leaves nothing for cron-parser.
    const parsed = index === 3 && fields[3] === '' ? { values: [], nth: 0 } : parseField(index, fields[index]!);
    if (typeof parsed === 'string') {
      const where = parsed.includes(raw[index]!) ? '' : ` (in ${JSON.stringify(raw[index])})`;
      return `${FIELD_NAMES[index]} field: ${parsed}${where}`;
    }
    values.push(parsed.values);
    if (index === 5) nth = parsed.nth;
  }
  return { values, nth };
}

/**
 * One field through cron-parser, with every other field `*`, so a failure names its
 * field. List items go one at a time: cron-parser rejects overlaps such as `1-5,3`,
 * which classic cron accepts.
 */
function parseField(index: number, field: string): { values: FieldValues; nth: number } | string {
  const values: FieldValues = [];
  let nth = 0;
  for (const item of field.includes('#') ? [field] : field.split(',')) {
    if (item === '') return 'empty list item';
    const probe = ['*', '*', '*', '*', '*', '*'];
    probe[index] = item;
    try {
      const fields = CronExpressionParser.parse(probe.join(' '), { tz: 'UTC', currentDate: 0 }).fields;
      const parsed = [fields.second, fields.minute, fields.hour, fields.dayOfMonth, fields.month, fields.dayOfWeek][index]!;
      values.push(...parsed.values);
      nth = fields.dayOfWeek.nthDay;
    } catch (error) {
      return describeParserError(error instanceof Error ? error.message : String(error));
    }
  }
  return { values, nth };
}

function describeParserError(message: string): string {
  let match = /got value (\S+) expected range (\d+-\d+)/.exec(message);
  if (match !== null) return `${match[1]} is out of range ${match[2]}`;
  match = /got range (\S+) expected range (\d+-\d+)/.exec(message);
  if (match !== null) return match[1]!.includes('NaN') ? 'invalid range' : `range ${match[1]} is outside ${match[2]}`;
  match = /Invalid range: (\S+), min/.exec(message);
  if (match !== null) return `range ${match[1]} runs backwards`;
  match = /cannot resolve alias "(\w+)"/.exec(message);
  if (match !== null) return `unknown name ${JSON.stringify(match[1])}`;
  if (message.includes('cannot repeat at every')) return 'a step must be a positive number';
  if (message.includes('occurrence number (#)')) return 'the number after # must be 1-5';
  if (message.includes('are incompatible')) return '# cannot be combined with lists, ranges, steps or L';
  if (message.includes('standalone L')) return 'L needs a weekday before it, e.g. 5L for the last Friday';
  if (message.includes('Invalid characters') || message.includes('Invalid wildcard')) return 'invalid characters';
  return message.replace(/^Constraint error, |^Validation error, /, '');
}

function neverFires(fields: CronFields): string {
  const plainDays = !fields.dayOfWeekRestricted && !fields.lastDayOfMonth && !fields.lastWeekdayOfMonth;
  if (plainDays && fields.daysOfMonth.length + fields.nearestWeekdays.length > 0) {
    const days = [...fields.daysOfMonth.map(String), ...fields.nearestWeekdays.map((day) => `${day}W`)];
    const months = [...fields.months].sort((a, b) => a - b).map((m) => MONTH_NAMES[m]);
    return `never fires: day ${days.join(', ')} of ${months.join(', ')}`;
  }
  return 'never fires: no day matches the day-of-month, month and day-of-week fields together';
}

function unique(values: number[]): number[] {
  return [...new Set(values)].sort((a, b) => a - b);
}
