// The dashboard's only way to the service: the public API with the user's
// key, exactly as any other client calls it.
import { session } from './session.js';

/** ApiError is an error body of the API (docs/api.md "Errors"). */
export class ApiError extends Error {
  constructor(status, body, requestId) {
    super(body.message || `The service answered ${status}.`);
    this.status = status;
    this.code = body.error || 'unknown';
    this.details = Array.isArray(body.details) ? body.details : [];
    this.requestId = requestId || '';
    /** retryAfter is the Retry-After of a 429 or 503 in seconds, 0 if none. */
    this.retryAfter = 0;
  }
}

/** Handlers for a key that stops working mid-session (set by app.js). */
export const hooks = { unauthorized: (_err) => {} };

/**
 * api calls the API. opts: {method, body (JSON-encoded), query
 * (URLSearchParams or object), signal, raw (resolve to the body's bytes,
 * an ArrayBuffer, not JSON),
 * key (sign-in's key to check)}. It resolves to the decoded body (null for
 * 204) and rejects with ApiError, or a plain Error for a network failure.
 */
export async function api(path, opts = {}) {
  const key = opts.key ?? session.key;
  let url = path;
  if (opts.query) {
    const q = opts.query instanceof URLSearchParams ? opts.query : toQuery(opts.query);
    const s = q.toString();
    if (s) url += `?${s}`;
  }
  const init = {
    method: opts.method || 'GET',
    headers: { Authorization: `Bearer ${key}`, Accept: opts.raw ? 'message/rfc822, */*' : 'application/json' },
    signal: opts.signal,
    credentials: 'omit',
    cache: 'no-store',
    referrerPolicy: 'no-referrer',
  };
  if (opts.body !== undefined) {
    init.headers['Content-Type'] = 'application/json';
    init.body = JSON.stringify(opts.body);
  }
  let res;
  try {
    res = await fetch(url, init);
  } catch (err) {
    if (err.name === 'AbortError') throw err;
    throw new Error('The service could not be reached. Check that it is running, then try again.');
  }
  if (res.ok) {
    if (res.status === 204) return null;
    return opts.raw ? res.arrayBuffer() : res.json();
  }
  let body = {};
  try {
    body = await res.json();
  } catch {
    body = { error: 'unknown', message: `The service answered ${res.status}.` };
  }
  const err = new ApiError(res.status, body, res.headers.get('X-Request-Id'));
  if (res.status === 429 || res.status === 503) {
    const after = res.headers.get('Retry-After');
    if (after) err.message += ` Try again in ${after} s.`;
    const seconds = Number(after);
    if (Number.isFinite(seconds) && seconds > 0) err.retryAfter = seconds;
  }
  if (res.status === 401 && opts.key === undefined) hooks.unauthorized(err);
  return Promise.reject(err);
}

function toQuery(obj) {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(obj)) {
    if (v === undefined || v === null || v === '') continue;
    if (Array.isArray(v)) v.forEach((x) => q.append(k, x));
    else q.set(k, v);
  }
  return q;
}

/** enc escapes one path segment. */
export const enc = encodeURIComponent;
