// Times and sizes as people read them. Every time is shown in the browser's
// time zone with the exact UTC instant in its title.

const dateTime = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'medium' });
const relative = new Intl.RelativeTimeFormat(undefined, { numeric: 'auto' });

/** when formats an RFC 3339 time; '—' for none. */
export function when(iso) {
  if (!iso) return '—';
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? iso : dateTime.format(d);
}

/** ago says how long ago (or from now) iso is: "3 minutes ago", "in 2 hours". */
export function ago(iso, now = Date.now()) {
  if (!iso) return '—';
  const s = Math.round((new Date(iso).getTime() - now) / 1000);
  const abs = Math.abs(s);
  if (abs < 45) return relative.format(s, 'second');
  if (abs < 45 * 60) return relative.format(Math.round(s / 60), 'minute');
  if (abs < 22 * 3600) return relative.format(Math.round(s / 3600), 'hour');
  if (abs < 26 * 86400) return relative.format(Math.round(s / 86400), 'day');
  return when(iso);
}

/**
 * due says when something scheduled happens: "in 3 minutes" ahead of its
 * time, "due now" once that has passed (it is late, not done: never
 * "5 seconds ago").
 */
export function due(iso, now = Date.now()) {
  if (!iso) return '—';
  const t = new Date(iso).getTime();
  if (Number.isNaN(t)) return iso;
  return t <= now ? 'due now' : ago(iso, now);
}

/** bytes formats a size. */
export function bytes(n) {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KiB`;
  return `${(n / 1024 / 1024).toFixed(1)} MiB`;
}

/** localInput turns an RFC 3339 time into a datetime-local value, and back. */
export function toLocalInput(iso) {
  if (!iso) return '';
  const d = new Date(iso);
  const pad = (n) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}`;
}

export function fromLocalInput(value) {
  if (!value) return '';
  const d = new Date(value);
  return Number.isNaN(d.getTime()) ? '' : d.toISOString().replace(/\.\d{3}Z$/, 'Z');
}
