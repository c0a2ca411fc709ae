// The email log (GET /v1/messages): the landing page. Filters live in the
// address bar, so a filtered view can be bookmarked or shared (the key never
// is); the newest page refreshes itself while it is on screen.
import { h, replace } from '../dom.js';
import { api, ApiError } from '../api.js';
import { badge, errorBox, field, pageHeader, pager, time } from '../ui.js';
import { fromLocalInput, toLocalInput } from '../format.js';

const statuses = ['scheduled', 'queued', 'deferred', 'delivered', 'partially_delivered', 'bounced', 'failed', 'suppressed', 'canceled'];
const refreshEvery = 5000;

export default async function render(ctx) {
  ctx.setTitle('Email log');
  const q = ctx.query;
  const filters = {
    status: q.get('status') || '', to: q.get('to') || '', from: q.get('from') || '',
    tag: q.getAll('tag'), category: q.get('category') || '', template: q.get('template') || '',
    event: q.get('event') || '', since: q.get('since') || '', until: q.get('until') || '',
  };
  const cursor = q.get('cursor') || '';
  const filtered = Object.values(filters).some((v) => (Array.isArray(v) ? v.length : v));

  const listArea = h('div', { class: 'log-list' });
  const liveNote = h('span', { class: 'live', hidden: true }, 'Live');
  replace(ctx.main,
    pageHeader('Email log', {
      lead: 'Every message this account sent, newest first: open one to see each recipient’s state, the receiving server’s reply and the full timeline.',
      actions: liveNote,
    }),
    filterPanel(filters, filtered, ctx),
    listArea);

  let shown = '';
  const load = async () => {
    const page = await api('/v1/messages', { query: { ...filters, cursor, limit: 25 }, signal: ctx.signal });
    const fingerprint = JSON.stringify(page.data.map((m) => [m.id, m.status]));
    if (fingerprint === shown) return;
    shown = fingerprint;
    const focused = document.activeElement?.closest?.('.log-list') ? document.activeElement.getAttribute('href') : null;
    replace(listArea,
      messageTable(page.data, filtered),
      pager(page.nextCursor,
        (next) => ctx.navigate(withQuery({ cursor: next })),
        cursor ? () => ctx.navigate(withQuery({ cursor: '' })) : null));
    if (focused) listArea.querySelector(`a[href="${CSS.escape(focused)}"]`)?.focus();
  };
  // A load that fails is one of three things. A request the service
  // refused (4xx: a filter it rejects, a missing scope) is shown as the
  // error, and not sent again: the same request would be refused the same
  // way, until the filters change (which renders the page anew). A 401 has
  // already signed the user out (api.js). A 429 is tried again after its
  // Retry-After. Only a service that could not be reached or failed (a
  // network error, 5xx) is "connection lost", tried again every few seconds.
  let timer = 0;
  const later = (ms) => {
    clearTimeout(timer);
    if (!ctx.signal.aborted) timer = setTimeout(tick, ms);
  };
  const showLive = () => {
    liveNote.hidden = !!cursor;
    liveNote.className = 'live';
    liveNote.textContent = 'Live';
  };
  const onFailure = (err) => {
    if (err.name === 'AbortError') return;
    const status = err instanceof ApiError ? err.status : 0;
    if (status === 401) return;
    if (status >= 400 && status < 500 && status !== 429) {
      shown = '';
      replace(listArea, errorBox(err));
      liveNote.hidden = true;
      return;
    }
    if (!shown) replace(listArea, errorBox(err));
    const wait = Math.max(refreshEvery, err.retryAfter * 1000 || 0);
    liveNote.hidden = false;
    liveNote.className = 'live live-lost';
    if (cursor) liveNote.textContent = 'Not loaded';
    else if (status === 429) liveNote.textContent = `Too many requests: retrying in ${wait / 1000} s`;
    else liveNote.textContent = wait === refreshEvery
      ? `Connection lost: retrying every ${refreshEvery / 1000} s`
      : `Connection lost: retrying in ${wait / 1000} s`;
    later(wait);
  };
  // Only the newest page follows new mail: an older page stays as it was
  // read, so paging through it is not disturbed. A page that could not be
  // loaded for want of the service keeps trying, so it recovers by itself
  // when the service is back.
  const followed = () => {
    showLive();
    if (!cursor) later(refreshEvery);
  };
  function tick() {
    if (document.hidden) {
      later(refreshEvery);
      return;
    }
    load().then(followed, onFailure);
  }
  liveNote.title = `Refreshes every ${refreshEvery / 1000} s while this tab is visible`;
  ctx.signal.addEventListener('abort', () => clearTimeout(timer));
  try {
    await load();
  } catch (err) {
    if (err.name === 'AbortError') throw err;
    onFailure(err);
    return;
  }
  followed();
}

/** withQuery is the current address with some query parameters replaced. */
function withQuery(changes) {
  const q = new URLSearchParams(location.search);
  for (const [k, v] of Object.entries(changes)) {
    q.delete(k);
    if (Array.isArray(v)) v.forEach((x) => x && q.append(k, x));
    else if (v) q.set(k, v);
  }
  const s = q.toString();
  return `/messages${s ? `?${s}` : ''}`;
}

/**
 * filterPanel holds the filters; on a phone it starts folded (unless a
 * filter is set), so that the first screen shows mail, not a form.
 */
function filterPanel(f, filtered, ctx) {
  const narrow = window.matchMedia('(max-width: 720px)').matches;
  return h('details', { class: 'filters-panel', open: filtered || !narrow },
    h('summary', {}, filtered ? 'Filters (set)' : 'Filters'),
    filterForm(f, ctx));
}

function filterForm(f, ctx) {
  const status = h('select', { name: 'status' },
    h('option', { value: '' }, 'Any status'),
    statuses.map((s) => h('option', { value: s, selected: f.status === s }, s.replaceAll('_', ' '))));
  const category = h('select', { name: 'category' },
    h('option', { value: '' }, 'Any category'),
    h('option', { value: 'transactional', selected: f.category === 'transactional' }, 'transactional'),
    h('option', { value: 'marketing', selected: f.category === 'marketing' }, 'marketing'));
  const to = h('input', { name: 'to', type: 'search', value: f.to, placeholder: 'ann@example.com', autocomplete: 'off' });
  const from = h('input', { name: 'from', type: 'search', value: f.from, placeholder: 'orders@yourdomain.com', autocomplete: 'off' });
  const tag = h('input', { name: 'tag', type: 'search', value: f.tag.join(' '), placeholder: 'order:1042 plan:pro', autocomplete: 'off', title: 'Space-separated key:value pairs; a message must have them all' });
  const template = h('input', { name: 'template', type: 'search', value: f.template, placeholder: 'welcome', autocomplete: 'off' });
  // Engagement (docs/api.md "Engagement tracking"): messages some
  // recipient of which opened, or clicked.
  const event = h('select', { name: 'event' },
    h('option', { value: '' }, 'Any engagement'),
    h('option', { value: 'opened', selected: f.event === 'opened' }, 'opened'),
    h('option', { value: 'clicked', selected: f.event === 'clicked' }, 'clicked'));
  const since = h('input', { name: 'since', type: 'datetime-local', value: toLocalInput(f.since) });
  const until = h('input', { name: 'until', type: 'datetime-local', value: toLocalInput(f.until) });
  const more = f.category || f.template || f.event || f.since || f.until;
  const form = h('form', { class: 'card filters-card', role: 'search', 'aria-label': 'Filter the log' },
    h('div', { class: 'filters' },
      field('Recipient', to),
      field('From', from),
      field('Status', status),
      field('Tags (key:value)', tag)),
    h('details', { class: 'more-filters', open: !!more },
      h('summary', {}, 'More filters'),
      h('div', { class: 'filters' },
        field('Category', category),
        field('Template', template),
        field('Engagement', event),
        field('Since', since),
        field('Until', until))),
    h('div', { class: 'filter-actions' },
      h('button', { type: 'submit', class: 'btn btn-primary' }, 'Apply filters'),
      h('a', { class: 'btn btn-secondary', href: '/messages' }, 'Clear')));
  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    ctx.navigate(withQuery({
      status: status.value, category: category.value, to: to.value.trim(), from: from.value.trim(),
      tag: tag.value.split(/\s+/).filter(Boolean), template: template.value.trim(), event: event.value,
      since: fromLocalInput(since.value), until: fromLocalInput(until.value), cursor: '',
    }));
  });
  return form;
}

function recipientsSummary(m) {
  const all = [...m.to, ...m.cc, ...m.bcc];
  if (all.length <= 2) return all.join(', ');
  return `${all.slice(0, 2).join(', ')} and ${all.length - 2} more`;
}

function messageTable(messages, filtered) {
  if (!messages.length) {
    return h('p', { class: 'empty', id: 'message-list' }, filtered
      ? 'No message matches these filters.'
      : 'No mail yet. Send one with POST /v1/send and it appears here within seconds.');
  }
  return h('div', { class: 'table-wrap' },
    h('table', { class: 'data', id: 'message-list' },
      h('caption', { class: 'visually-hidden' }, 'Messages, newest first'),
      h('thead', {}, h('tr', {},
        h('th', { scope: 'col' }, 'Subject'),
        h('th', { scope: 'col' }, 'To'),
        h('th', { scope: 'col' }, 'Status'),
        h('th', { scope: 'col', class: 'nowrap' }, 'Sent'))),
      h('tbody', {}, messages.map((m) => h('tr', {},
        h('td', { 'data-label': 'Subject' },
          h('a', { class: 'message-link row-title', href: `/messages/${encodeURIComponent(m.id)}` }, m.subject || '(no subject)'),
          h('div', { class: 'row-sub' }, m.from,
            m.category === 'marketing' ? ' · marketing' : '',
            Object.entries(m.tags).map(([k, v]) => h('span', { class: 'tag' }, `${k}:${v}`)))),
        h('td', { 'data-label': 'To', class: 'wrap-anywhere' }, recipientsSummary(m)),
        h('td', { 'data-label': 'Status' }, badge(m.status)),
        h('td', { 'data-label': 'Sent', class: 'nowrap' }, time(m.scheduledAt && m.status === 'scheduled' ? m.scheduledAt : m.createdAt)))))));
}
