/** Numbers and times in the app's language; formatters are cached per language, as every scroll formats the rows on screen. */
const sizeUnits = ['B', 'KB', 'MB', 'GB', 'TB', 'PB'];

const numberFormats = new Map<string, Intl.NumberFormat>();
function numberFormat(locale: string | undefined, digits: number): Intl.NumberFormat {
  const key = `${locale ?? ''}|${digits}`;
  let format = numberFormats.get(key);
  if (!format) {
    format = new Intl.NumberFormat(locale, { maximumFractionDigits: digits });
    numberFormats.set(key, format);
  }
  return format;
}

/** 1536 → "1.5 KB" (binary multiples, the way file managers show them). */
export function formatSize(bytes: number, locale?: string): string {
  if (!Number.isFinite(bytes) || bytes < 0) return '';
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < sizeUnits.length - 1) {
    value /= 1024;
    unit++;
  }
  const digits = unit === 0 || value >= 100 ? 0 : 1;
  return `${numberFormat(locale, digits).format(value)} ${sizeUnits[unit]}`;
}

/** 12345 → "12,345". */
export function formatCount(count: number, locale?: string): string {
  return numberFormat(locale, 0).format(count);
}

const timeFormats = new Map<string, Intl.DateTimeFormat>();
function dateTimeFormat(locale: string | undefined, withTime: boolean): Intl.DateTimeFormat {
  const key = `${locale ?? ''}|${withTime}`;
  let format = timeFormats.get(key);
  if (!format) {
    format = new Intl.DateTimeFormat(locale, withTime ? { dateStyle: 'medium', timeStyle: 'short' } : { dateStyle: 'medium' });
    timeFormats.set(key, format);
  }
  return format;
}

function parseTime(iso: string): Date | undefined {
  if (!iso) return undefined;
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? undefined : date;
}

/** An ISO 8601 time in the user's locale; "" for a missing or invalid time. */
export function formatTime(iso: string, locale?: string): string {
  const date = parseTime(iso);
  return date ? dateTimeFormat(locale, true).format(date) : '';
}

/** The date alone: "21 Dec 2026". */
export function formatDate(iso: string, locale?: string): string {
  const date = parseTime(iso);
  return date ? dateTimeFormat(locale, false).format(date) : '';
}

/** Whole days from one ISO time to another, rounded: the bin's retention from `deleted` to `purge`. */
export function daysBetween(fromIso: string, toIso: string): number | undefined {
  const from = parseTime(fromIso);
  const to = parseTime(toIso);
  if (!from || !to || to < from) return undefined;
  return Math.round((to.getTime() - from.getTime()) / 86_400_000);
}

export interface DurationUnits {
  readonly hour: (n: number) => string;
  readonly minute: (n: number) => string;
  readonly second: (n: number) => string;
  readonly join: string;
}

const englishUnits: DurationUnits = {
  hour: (n) => `${n} hour${n === 1 ? '' : 's'}`,
  minute: (n) => `${n} minute${n === 1 ? '' : 's'}`,
  second: (n) => `${n} second${n === 1 ? '' : 's'}`,
  join: ' ',
};

/** 90 → "1 minute 30 seconds": the two largest units. */
export function formatDuration(totalSeconds: number, units: DurationUnits = englishUnits): string {
  const seconds = Math.max(0, Math.ceil(totalSeconds));
  const hours = Math.floor(seconds / 3600);
  const minutes = Math.floor((seconds % 3600) / 60);
  const rest = seconds % 60;
  const parts = [hours ? units.hour(hours) : '', minutes ? units.minute(minutes) : '', rest || seconds === 0 ? units.second(rest) : ''];
  return parts.filter(Boolean).slice(0, 2).join(units.join);
}
