// Received mail (GET /v1/received): what the account's receiving domains
// took, newest first, with its verdicts at a glance; filtered by envelope
// recipient and From in the address bar, so a view can be bookmarked.
import { h, replace } from '../dom.js';
import { api } from '../api.js';
import { errorBox, field, pageHeader, pager, table, time, turnPage } from '../ui.js';
import { bytes } from '../format.js';
import { verdictBadge } from './verdicts.js';

export default async function render(ctx) {
  ctx.setTitle('Received');
  const listRegion = h('div', { id: 'received-list' });
  const to = h('input', { id: 'received-to', type: 'email', value: ctx.query.get('to') || '', placeholder: 'support@in.example.com' });
  const from = h('input', { id: 'received-from', type: 'email', value: ctx.query.get('from') || '', placeholder: 'someone@example.org' });
  const filters = h('form', { class: 'filters', id: 'received-filters', role: 'search' },
    field('To (an envelope recipient)', to),
    field('From', from),
    h('button', { type: 'submit', class: 'btn btn-secondary' }, 'Filter'));
  filters.addEventListener('submit', (ev) => {
    ev.preventDefault();
    const q = new URLSearchParams();
    if (to.value.trim()) q.set('to', to.value.trim());
    if (from.value.trim()) q.set('from', from.value.trim());
    const s = q.toString();
    ctx.navigate(`/received${s ? `?${s}` : ''}`);
  });
  let cursor = null;

  async function load(c = cursor) {
    const list = await api('/v1/received', {
      query: { to: ctx.query.get('to'), from: ctx.query.get('from'), cursor: c, limit: 20 }, signal: ctx.signal,
    });
    cursor = c;
    replace(listRegion,
      table([
        {
          label: 'Subject',
          class: 'wrap-anywhere',
          cell: (m) => h('div', {},
            h('a', { class: 'row-title', href: `/received/${encodeURIComponent(m.id)}` }, m.subject || '(no subject)'),
            m.parseProblem ? h('div', { class: 'row-sub' }, 'partly unreadable: stored as received') : null),
        },
        { label: 'From', class: 'wrap-anywhere', cell: (m) => m.from || h('span', { class: 'muted' }, '—') },
        { label: 'To', class: 'wrap-anywhere', cell: (m) => m.recipients.join(', ') },
        {
          label: 'Checks',
          cell: (m) => h('span', { class: 'verdicts' },
            verdictBadge('SPF', m.authentication.spf), ' ', verdictBadge('DKIM', m.authentication.dkim), ' ',
            verdictBadge('DMARC', m.authentication.dmarc)),
        },
        { label: 'Size', class: 'nowrap', cell: (m) => `${bytes(m.size)}${m.attachments.length ? ` · ${m.attachments.length} attached` : ''}` },
        { label: 'Received', class: 'nowrap', cell: (m) => time(m.receivedAt) },
      ], list.data, {
        id: 'received', caption: 'Received messages',
        empty: 'No mail received yet. Set receiving on a domain (PATCH /v1/domains/{domain} {"receiving": true}), publish its MX record, and mail sent to any of its addresses shows here.',
      }),
      pager(list.nextCursor, (n) => page(n), cursor ? () => page(null) : null));
  }

  function page(c) {
    return turnPage(listRegion, () => load(c), '#received-title', ctx.signal);
  }

  replace(ctx.main,
    pageHeader('Received', { lead: 'Mail your receiving domains took, newest first, with the checks a receiver makes.' }),
    filters,
    h('h2', { id: 'received-title', class: 'visually-hidden', tabindex: '-1' }, 'Messages'),
    listRegion);
  try {
    await load(null);
  } catch (err) {
    if (err.name === 'AbortError') throw err;
    // A filter the service refuses says why, and stays on the page.
    if (err.status >= 400 && err.status < 500 && err.status !== 404) replace(listRegion, errorBox(err));
    else throw err;
  }
}
