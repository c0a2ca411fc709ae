// The audit log (GET /v1/audit-log, scope keys): who changed what in the
// account, newest first. Filters and the page live in the address bar, as
// the email log's do, so that a filtered view can be bookmarked.
import { h, replace } from '../dom.js';
import { api } from '../api.js';
import { errorBox, field, pageHeader, pager, time } from '../ui.js';
import { fromLocalInput, toLocalInput } from '../format.js';

/** The actions, in the order docs/api.md lists them. */
const actions = [
  'api_key.created', 'api_key.revoked',
  'domain.created', 'domain.verified', 'domain.updated', 'domain.deleted', 'domain.dkim_rotated',
  'webhook.created', 'webhook.updated', 'webhook.secret_rotated', 'webhook.deleted',
  'template.created', 'template.updated', 'template.deleted',
  'suppression.created', 'suppression.deleted',
  'account.created', 'account.updated',
];

export default async function render(ctx) {
  ctx.setTitle('Audit log');
  const q = ctx.query;
  const filters = {
    action: q.get('action') || '', keyId: q.get('keyId') || '',
    since: q.get('since') || '', until: q.get('until') || '',
  };
  const cursor = q.get('cursor') || '';
  const filtered = Object.values(filters).some(Boolean);
  const listArea = h('div', { id: 'audit-list' });
  replace(ctx.main,
    pageHeader('Audit log', {
      lead: 'Every change made to this account, newest first: by which API key (or the command line, or Mailroom itself), from where, and what each field was before and after. Secrets are never shown.',
    }),
    filterForm(filters, ctx),
    h('section', { 'aria-labelledby': 'audit-list-title' },
      h('div', { class: 'section-head' }, h('h2', { id: 'audit-list-title', tabindex: '-1' }, 'Changes')),
      listArea));
  try {
    const page = await api('/v1/audit-log', { query: { ...filters, cursor, limit: 25 }, signal: ctx.signal });
    replace(listArea,
      auditTable(page.data, filtered),
      pager(page.nextCursor,
        (next) => ctx.navigate(withQuery({ cursor: next })),
        cursor ? () => ctx.navigate(withQuery({ cursor: '' })) : null));
  } catch (err) {
    if (err.name === 'AbortError') throw err;
    // A filter the service refuses is shown with its words, beside the
    // form that can change it; anything else is the page's failure.
    if (err.status >= 400 && err.status < 500 && err.status !== 429) replace(listArea, errorBox(err));
    else throw err;
  }
}

/** withQuery is the current address with some query parameters replaced. */
function withQuery(changes) {
  const q = new URLSearchParams(location.search);
  for (const [k, v] of Object.entries(changes)) {
    q.delete(k);
    if (v) q.set(k, v);
  }
  const s = q.toString();
  return `/audit-log${s ? `?${s}` : ''}`;
}

function filterForm(f, ctx) {
  const action = h('select', { name: 'action' },
    h('option', { value: '' }, 'Any action'),
    actions.map((a) => h('option', { value: a, selected: f.action === a }, a)));
  const keyId = h('input', { name: 'keyId', type: 'search', value: f.keyId, placeholder: 'key id', autocomplete: 'off', spellcheck: 'false' });
  const since = h('input', { name: 'since', type: 'datetime-local', value: toLocalInput(f.since) });
  const until = h('input', { name: 'until', type: 'datetime-local', value: toLocalInput(f.until) });
  const form = h('form', { class: 'card filters-card', role: 'search', 'aria-label': 'Filter the audit log' },
    h('div', { class: 'filters' },
      field('Action', action),
      field('API key', keyId, 'The changes one key made'),
      field('Since', since),
      field('Until', until)),
    h('div', { class: 'filter-actions' },
      h('button', { type: 'submit', class: 'btn btn-primary' }, 'Apply filters'),
      h('a', { class: 'btn btn-secondary', href: '/audit-log' }, 'Clear')));
  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    ctx.navigate(withQuery({
      action: action.value, keyId: keyId.value.trim(),
      since: fromLocalInput(since.value), until: fromLocalInput(until.value), cursor: '',
    }));
  });
  return form;
}

/** actor says who made a change: a key (a link to its changes), the CLI or Mailroom. */
function actor(e) {
  switch (e.actor.type) {
    case 'api_key':
      return h('span', {}, 'API key ', h('a', { class: 'mono audit-key', href: `/audit-log?keyId=${encodeURIComponent(e.actor.keyId)}` }, e.actor.keyId));
    case 'cli':
      return h('span', {}, 'Command line');
    case 'system':
      return h('span', {}, 'Mailroom');
    default:
      return h('span', {}, String(e.actor.type));
  }
}

/** value shows one side of a change as text: never parsed as HTML. */
function value(v) {
  if (v === null || v === undefined) return h('span', { class: 'muted' }, 'none');
  if (Array.isArray(v)) return h('span', { class: 'mono' }, v.length ? v.join(', ') : '(empty)');
  if (v === '') return h('span', { class: 'muted' }, '(empty)');
  return h('span', { class: 'mono wrap-anywhere' }, typeof v === 'object' ? JSON.stringify(v) : String(v));
}

/** changes lists each field with its value before and after. */
function changes(e) {
  const fields = Object.keys(e.changes || {}).sort();
  if (!fields.length) return h('span', { class: 'muted' }, '—');
  return h('dl', { class: 'audit-changes' }, fields.map((f) => [
    h('dt', {}, f),
    h('dd', {}, value(e.changes[f][0]), h('span', { 'aria-label': 'became' }, ' → '), value(e.changes[f][1])),
  ]));
}

function where(e) {
  if (!e.requestId && !e.ip) return h('span', { class: 'muted' }, '—');
  return h('div', {},
    e.ip ? h('div', { class: 'mono audit-ip' }, e.ip) : null,
    e.requestId ? h('div', { class: 'row-sub mono wrap-anywhere', title: 'The request id (X-Request-Id)' }, e.requestId) : null);
}

function auditTable(entries, filtered) {
  if (!entries.length) {
    return h('p', { class: 'empty', id: 'audit-entries' }, filtered ? 'No change matches these filters.' : 'No changes recorded yet.');
  }
  return h('div', { class: 'table-wrap' },
    h('table', { class: 'data', id: 'audit-entries' },
      h('caption', { class: 'visually-hidden' }, 'Changes to this account, newest first'),
      h('thead', {}, h('tr', {}, ['When', 'Action', 'Target', 'By', 'From', 'Changes'].map((l) => h('th', { scope: 'col' }, l)))),
      h('tbody', {}, entries.map((e) => h('tr', { dataset: { action: e.action } },
        h('td', { class: 'nowrap', 'data-label': 'When' }, time(e.createdAt)),
        h('td', { 'data-label': 'Action' }, h('span', { class: 'row-title mono audit-action' }, e.action)),
        h('td', { 'data-label': 'Target' }, h('span', {}, e.target.type.replaceAll('_', ' '), ' '), h('span', { class: 'mono wrap-anywhere' }, e.target.id)),
        h('td', { 'data-label': 'By', class: 'audit-actor' }, actor(e)),
        h('td', { 'data-label': 'From' }, where(e)),
        h('td', { 'data-label': 'Changes' }, changes(e)))))));
}
