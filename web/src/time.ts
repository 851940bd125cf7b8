// Times from the API are RFC 3339 in UTC with up to microseconds ("2026-11-30T09:42:47.950820Z").
// Date keeps only milliseconds, and two changes of one ask can land within the same millisecond,
// so comparisons here keep every digit.

const RFC3339 = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2})(?:\.(\d{1,9}))?(Z|[+-]\d{2}:\d{2})$/;

/** A sortable key for an RFC 3339 time: UTC seconds and nanoseconds, fixed width. */
export function timeKey(t: string): string {
  const m = RFC3339.exec(t);
  if (!m) return '';
  let seconds = Math.floor(Date.parse(m[1] + m[3]) / 1000);
  if (Number.isNaN(seconds)) return '';
  seconds = Math.max(0, seconds);
  const frac = (m[2] ?? '').padEnd(9, '0');
  return String(seconds).padStart(12, '0') + '.' + frac;
}

/** Orders two RFC 3339 times: negative when a is earlier, 0 when equal, positive when later. */
export function compareTimes(a: string, b: string): number {
  const ka = timeKey(a);
  const kb = timeKey(b);
  return ka < kb ? -1 : ka > kb ? 1 : 0;
}

/** "just now", "5 min", "3 h", "2 d", or a date: how long ago t was, relative to now. */
export function age(t: string, now: number = Date.now()): string {
  const ms = now - Date.parse(t);
  if (Number.isNaN(ms)) return '';
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 45) return 'just now';
  const min = Math.round(s / 60);
  if (min < 60) return `${min} min ago`;
  const h = Math.round(min / 60);
  if (h < 24) return `${h} h ago`;
  const d = Math.round(h / 24);
  if (d < 7) return `${d} d ago`;
  return new Date(t).toLocaleDateString(undefined, { day: 'numeric', month: 'short', year: 'numeric' });
}

/** The full local date and time, for a tooltip. */
export function fullTime(t: string): string {
  const d = new Date(t);
  return Number.isNaN(d.getTime()) ? t : d.toLocaleString();
}
