/**
 * HTML built by a tagged template that escapes every interpolated value: the only way
 * the dashboard writes markup. A value is emitted raw only when it is itself `Html`
 * (built by this tag), so a job name, a run's data or an error message can never
 * become markup, whatever it holds.
 */

export class Html {
  readonly text: string;

  constructor(text: string) {
    this.text = text;
  }

  toString(): string {
    return this.text;
  }
}

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/** Text for an element's content or a quoted attribute value. */
export function escapeHtml(value: string): string {
  return value.replace(/[&<>"']/g, (char) => ESCAPES[char] as string);
}

/** What may be interpolated: text (escaped), markup built by `html`, lists of either, and nothing (`undefined`, `null`, `false`). */
export type Interpolation = Html | string | number | boolean | undefined | null | readonly Interpolation[];

function render(value: Interpolation): string {
  if (value === undefined || value === null || value === false) return '';
  if (value instanceof Html) return value.text;
  if (Array.isArray(value)) return value.map(render).join('');
  return escapeHtml(String(value));
}

export function html(strings: TemplateStringsArray, ...values: readonly Interpolation[]): Html {
  let text = strings[0] ?? '';
  for (let i = 0; i < values.length; i += 1) text += render(values[i] as Interpolation) + (strings[i + 1] ?? '');
  return new Html(text);
}
