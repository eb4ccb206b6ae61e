/**
 * The types of cron-parser's parser module (cron.ts imports it by path, not through the
 * package's index): cron-parser ships its declarations under dist/types/, which
 * TypeScript does not find for a path into dist/.
 */
declare module 'cron-parser/dist/CronExpressionParser.js' {
  export { CronExpressionParser } from 'cron-parser';
}
