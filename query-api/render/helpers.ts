/**
 * Template helpers for transactional rendering, registered on an isolated Handlebars environment.
 *
 * The list's locale, time zone and currency reach the helpers per render through the Handlebars `data`
 * frame (`template(params, { data: { list } })` → `options.data.list`), never through module state, so
 * concurrent renders for different lists cannot see each other's settings.
 *
 * Missing values (undefined, null, '') render as ''. A value of the wrong kind fails the render with a
 * message that names the helper (e.g. `formatNumber: "abc" is not a number`): a receipt showing a wrong
 * amount is worse than a clear 17007 error.
 */
import Handlebars from 'handlebars';
import { createRequire } from 'node:module';
import { format } from 'date-fns';
import type { Locale } from 'date-fns';
import { zoneOffsetMs } from '../../shared/dates.js';

export interface ListContext {
  locale: string;
  timeZone: string;
  currency: string;
}

export type HandlebarsEnv = ReturnType<typeof Handlebars.create>;

/**
 * A helper's failure, told two ways: `message` for the client, who may see the value they sent (what
 * they need to fix it), and `logMessage`, which names the problem and the value's kind but never the
 * value itself: params may hold personal data or card numbers, and the log must not (docs/operations.md
 * "Logs").
 */
export class HelperError extends Error {
  constructor(
    message: string,
    readonly logMessage: string,
    options?: ErrorOptions,
  ) {
    super(message, options);
    this.name = 'HelperError';
  }
}
type HelperOptions = Handlebars.HelperOptions & { data?: { list?: ListContext } };

/** A fresh Handlebars environment with our helpers; the global `Handlebars` is never touched. */
export function createHandlebars(): HandlebarsEnv {
  const env = Handlebars.create();
  // The built-in `{{log}}` would let template authors write to the service's stdout. Overridden rather than
  // unregistered: the compiler treats `log` as a known helper and would call a missing function.
  env.registerHelper('log', () => '');
  for (const [name, fn] of Object.entries(helpers)) {
    env.registerHelper(name, (...args: unknown[]) => {
      const options = args.pop() as HelperOptions;
      try {
        return fn(args, options);
      } catch (err) {
        // Anything else (Intl, date-fns) may quote an argument, which may be a param: logged by its class.
        const logged =
          err instanceof HelperError ? err.logMessage : err instanceof Error ? err.name : 'error';
        throw new HelperError(
          `${name}: ${err instanceof Error ? err.message : String(err)}`,
          `${name}: ${logged}`,
          {
            cause: err,
          },
        );
      }
    });
  }
  return env;
}

type Helper = (args: unknown[], options: HelperOptions) => unknown;

const helpers: Record<string, Helper> = {
  formatNumber([value, decimals = 2], options) {
    const n = numeric(value);
    if (n === undefined) return '';
    const digits = fractionDigits(decimals);
    return numberFormat(list(options).locale, {
      minimumFractionDigits: digits,
      maximumFractionDigits: digits,
    })(n);
  },

  formatMoney([value, currency], options) {
    const n = numeric(value);
    if (n === undefined) return '';
    const code =
      currency === undefined || currency === null || currency === '' ? list(options).currency : currency;
    if (typeof code !== 'string')
      throw new HelperError(
        `currency must be a string, got ${describe(code)}`,
        `currency must be a string, got ${kind(code)}`,
      );
    return numberFormat(list(options).locale, { style: 'currency', currency: code })(n);
  },

  formatDate([value, pattern = 'yyyy-MM-dd'], options) {
    if (isMissing(value)) return '';
    if (typeof pattern !== 'string')
      throw new HelperError(
        `pattern must be a string, got ${describe(pattern)}`,
        `pattern must be a string, got ${kind(pattern)}`,
      );
    // date-fns would console.warn (and throw, quoting the date in the host zone) for these traps.
    if (/[YD]/.test(pattern.replace(/'(?:[^']|'')*'?/g, ''))) {
      throw new HelperError(
        `use yyyy for the year and d for the day in ${describe(pattern)} (Y, D: week year, day of year)`,
        'use yyyy for the year and d for the day in the pattern (Y, D: week year, day of year)',
      );
    }
    const { timeZone, locale } = list(options);
    const instant = toInstant(value, timeZone);
    return format(new ZonedDate(instant, zoneOffsetMs(instant, timeZone)), pattern, {
      locale: dateLocale(locale),
      useAdditionalWeekYearTokens: true,
      useAdditionalDayOfYearTokens: true,
    });
  },

  eq: ([a, b]) => a === b,
  ne: ([a, b]) => a !== b,
  lt: ([a, b]) => compare(a, b, (c) => c < 0),
  lte: ([a, b]) => compare(a, b, (c) => c <= 0),
  gt: ([a, b]) => compare(a, b, (c) => c > 0),
  gte: ([a, b]) => compare(a, b, (c) => c >= 0),
  and: (args) => args.every(truthy),
  or: (args) => args.some(truthy),
  not: ([value]) => !truthy(value),

  default: ([value, fallback]) => (isMissing(value) ? fallback : value),
  upper: ([value], options) => text(value).toLocaleUpperCase(list(options).locale),
  lower: ([value], options) => text(value).toLocaleLowerCase(list(options).locale),
  // Returned as a plain string, so `{{json x}}` is HTML-escaped in html templates like any value.
  json: ([value]) => (value === undefined ? '' : JSON.stringify(value)),
};

function list(options: HelperOptions): ListContext {
  const ctx = options.data?.list;
  if (!ctx) throw new Error('no list context (render with data.list)');
  return ctx;
}

const isMissing = (v: unknown): boolean => v === undefined || v === null || v === '';

/** Handlebars' own `#if` truthiness: empty arrays are false too. */
const truthy = (v: unknown): boolean => Boolean(v) && !(Array.isArray(v) && v.length === 0);

const QUOTED_CHARS = 64;

/** A value as the client sees it in a 17007: a string quoted (a long one only in part), else its kind. */
function describe(v: unknown): string {
  if (typeof v !== 'string') return Array.isArray(v) ? 'an array' : typeof v;
  return v.length <= QUOTED_CHARS
    ? JSON.stringify(v)
    : `${JSON.stringify(v.slice(0, QUOTED_CHARS) + '…')} (${v.length} characters)`;
}

/** A value as the log names it: its kind only. */
function kind(v: unknown): string {
  return typeof v === 'string' ? 'a string' : Array.isArray(v) ? 'an array' : v === null ? 'null' : typeof v;
}

function text(v: unknown): string {
  return typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean' ? String(v) : '';
}

const DECIMAL = /^[+-]?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?$/i;

/**
 * A number, or a decimal string kept as a string: Intl formats strings exactly ("0.30", or 20+ digit
 * amounts), with no detour through binary floating point.
 */
function numeric(value: unknown): number | string | undefined {
  if (isMissing(value)) return undefined;
  if (typeof value === 'number' && Number.isFinite(value)) return value;
  if (typeof value === 'string' && DECIMAL.test(value.trim())) return value.trim();
  throw new HelperError(`${describe(value)} is not a number`, `${kind(value)} is not a number`);
}

function fractionDigits(decimals: unknown): number {
  const n = typeof decimals === 'string' && /^\d+$/.test(decimals) ? Number(decimals) : decimals;
  if (typeof n !== 'number' || !Number.isInteger(n) || n < 0 || n > 20) {
    throw new HelperError(
      `decimals must be an integer from 0 to 20, got ${describe(decimals)}`,
      `decimals must be an integer from 0 to 20, got ${kind(decimals)}`,
    );
  }
  return n;
}

// ES2023 Intl (Node 20 has it; the ES2022 typings do not): 'negative' avoids "-0,00" for tiny negatives.
const SIGN_DISPLAY = 'negative' as unknown as Intl.NumberFormatOptions['signDisplay'];

const numberFormats = new Map<string, Intl.NumberFormat>();

/** Intl.NumberFormat formats decimal strings exactly since ES2023; the ES2022 typings only admit numbers. */
function numberFormat(locale: string, opts: Intl.NumberFormatOptions): (n: number | string) => string {
  // Building a formatter costs far more than using one; a pure memo, bounded by clearing.
  const key = `${locale}|${opts.style}|${opts.currency}|${opts.maximumFractionDigits}`;
  let nf = numberFormats.get(key);
  if (!nf) {
    nf = new Intl.NumberFormat(locale, { ...opts, signDisplay: SIGN_DISPLAY });
    if (numberFormats.size >= 1000) numberFormats.clear();
    numberFormats.set(key, nf);
  }
  const format = nf;
  return (n) => format.format(n as number);
}

/** -1, 0 or 1 for two numbers (or numeric strings) or two strings; anything else compares false. */
function compare(a: unknown, b: unknown, test: (c: number) => boolean): boolean {
  const na = asNumber(a);
  const nb = asNumber(b);
  if (na !== undefined && nb !== undefined) return test(Math.sign(na - nb));
  if (typeof a === 'string' && typeof b === 'string') return test(a < b ? -1 : a > b ? 1 : 0);
  return false;
}

function asNumber(v: unknown): number | undefined {
  if (typeof v === 'number') return Number.isNaN(v) ? undefined : v;
  if (typeof v === 'string' && DECIMAL.test(v.trim())) return Number(v);
  return undefined;
}

const ISO =
  /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d{1,9}))?)?)?(Z|[+-]\d{2}(?::?\d{2})?)?$/i;

/**
 * Epoch ms, or an ISO 8601 string. A string without a zone (e.g. "2026-03-29" or "2026-03-29T10:00")
 * is a wall-clock time in the list's zone, so a plain date never shifts to the previous day.
 */
function toInstant(value: unknown, timeZone: string): number {
  if (typeof value === 'number' && Number.isFinite(value)) return value;
  const m = typeof value === 'string' ? ISO.exec(value.trim()) : null;
  if (!m)
    throw new HelperError(
      `${describe(value)} is not an ISO 8601 date or epoch milliseconds`,
      `${kind(value)} is not an ISO 8601 date or epoch milliseconds`,
    );
  const [, y, mo, d, h = '0', mi = '0', s = '0', frac = '0', zone] = m;
  const wall = Date.UTC(+y!, +mo! - 1, +d!, +h, +mi, +s, Number(frac.padEnd(3, '0').slice(0, 3)));
  const check = new Date(wall);
  if (check.getUTCMonth() !== +mo! - 1 || check.getUTCDate() !== +d! || +h > 23 || +mi > 59 || +s > 59) {
    throw new HelperError(`${describe(value)} is not a valid date`, `${kind(value)} is not a valid date`);
  }
  if (zone) {
    if (zone.toUpperCase() === 'Z') return wall;
    const digits = zone.replace(':', '');
    const minutes = Number(digits.slice(1, 3)) * 60 + Number(digits.slice(3, 5) || '0');
    return wall - (zone.startsWith('-') ? -1 : 1) * minutes * 60_000;
  }
  // Two passes settle the offset near DST changes; a time in the spring-forward gap moves forward.
  return wall - zoneOffsetMs(wall - zoneOffsetMs(wall, timeZone), timeZone);
}

let locales: Record<string, Locale> | undefined;

/**
 * date-fns' locales, loaded at their first use, not with this module: importing them all as ES modules
 * took ~2 s of every start of the service (the API thread never renders; a render worker loads them when it
 * starts, worker.ts).
 */
export function dateLocales(): Record<string, Locale> {
  return (locales ??= createRequire(import.meta.url)('date-fns/locale') as Record<string, Locale>);
}

/** 'ro-RO' → ro, 'en-US' → enUS, 'pt-BR' → ptBR; unknown → date-fns' default (en-US). */
function dateLocale(tag: string): Locale | undefined {
  const all = dateLocales();
  const [lang = '', region = ''] = tag.split('-');
  return all[lang + region.toUpperCase()] ?? all[lang.toLowerCase()];
}

const FIELDS = ['FullYear', 'Month', 'Date', 'Day', 'Hours', 'Minutes', 'Seconds', 'Milliseconds'] as const;
type DateMethods = Record<string, (...args: number[]) => number>;

/**
 * A Date whose local-time getters and setters read the wall clock at a fixed UTC offset (the list zone's
 * offset at the formatted instant). That is all date-fns `format` needs to print another zone's time;
 * `getTime()` stays the true instant and `getTimezoneOffset()` the zone's, so `X`/`x`/`O` and `t`/`T`
 * tokens are right too. (@date-fns/tz's TZDate does this in full; it is not installed.)
 */
class ZonedDate extends Date {
  constructor(
    instant: number,
    private readonly offsetMs: number,
  ) {
    super(instant);
  }

  override getTimezoneOffset(): number {
    return -this.offsetMs / 60_000;
  }

  /** date-fns builds intermediate dates through this hook, so they keep the offset. */
  [Symbol.for('constructDateFrom')](value: Date | number | string): ZonedDate {
    return new ZonedDate(+new Date(value), this.offsetMs);
  }

  static {
    const proto = ZonedDate.prototype as unknown as DateMethods;
    for (const f of FIELDS) {
      proto[`get${f}`] = function (this: ZonedDate) {
        const wall = new Date(this.getTime() + this.offsetMs) as unknown as DateMethods;
        return wall[`getUTC${f}`]!.call(wall);
      };
      if (f === 'Day') continue;
      proto[`set${f}`] = function (this: ZonedDate, ...args: number[]) {
        const wall = new Date(this.getTime() + this.offsetMs) as unknown as DateMethods;
        wall[`setUTC${f}`]!.apply(wall, args);
        return this.setTime(+wall - this.offsetMs);
      };
    }
  }
}
