// The account's sending domains (GET /v1/domains), and adding one: the
// service makes its DKIM key and answers with the DNS records to publish,
// which the domain's own page shows.
import { h, replace } from '../dom.js';
import { api, enc } from '../api.js';
import { badge, errorBox, field, pageHeader, pager, table, time, toast, dialog } from '../ui.js';

export default async function render(ctx) {
  ctx.setTitle('Domains');
  const cursor = ctx.query.get('cursor') || '';
  const page = await api('/v1/domains', { query: { cursor, limit: 25 }, signal: ctx.signal });

  const add = () => addDomain(ctx);
  replace(ctx.main,
    pageHeader('Domains', {
      lead: 'The domains you send from. Mail is accepted from an address at a domain once its DNS records show that it is yours.',
      actions: h('button', { type: 'button', class: 'btn btn-primary', id: 'add-domain', on: { click: add } }, 'Add domain'),
    }),
    page.data.length || cursor ? domainTable(page.data) : emptyState(add),
    pager(page.nextCursor,
      (next) => ctx.navigate(`/domains?cursor=${encodeURIComponent(next)}`),
      cursor ? () => ctx.navigate('/domains') : null));
}

function domainTable(domains) {
  return table([
    {
      label: 'Domain',
      cell: (d) => h('div', {},
        h('a', { class: 'domain-link row-title', href: `/domains/${enc(d.name)}` }, d.name),
        h('div', { class: 'row-sub' }, recordSummary(d))),
    },
    { label: 'Status', cell: (d) => badge(d.status) },
    { label: 'Added', cell: (d) => time(d.createdAt), class: 'nowrap' },
    { label: 'Last checked', cell: (d) => (d.lastCheckedAt ? time(d.lastCheckedAt) : h('span', { class: 'muted' }, 'Not yet')), class: 'nowrap' },
  ], domains, { id: 'domains', caption: 'Domains', empty: 'No more domains.' });
}

/** recordSummary says how many of the required records were found. */
function recordSummary(d) {
  const required = d.records.filter((r) => r.required);
  const ok = required.filter((r) => r.status === 'verified').length;
  if (ok === required.length) return `All ${required.length} required DNS records found`;
  return `${ok} of ${required.length} required DNS records found`;
}

function emptyState(add) {
  return h('div', { class: 'empty config-empty', id: 'domains-empty' },
    h('h2', {}, 'No domains yet'),
    h('p', {}, 'Add the domain in your From addresses, such as example.com. Mailroom makes a DKIM signing key for it and ',
      'shows the DNS records to publish at your DNS provider; once they are found, mail from any address at the domain is accepted.'),
    h('button', { type: 'button', class: 'btn btn-primary', on: { click: add } }, 'Add your first domain'));
}

/** addDomain asks for a name, adds it, and opens its page with the records. */
async function addDomain(ctx) {
  const created = await dialog('Add a domain', (close) => {
    const input = h('input', {
      name: 'name', type: 'text', required: true, autocomplete: 'off', spellcheck: 'false', autocapitalize: 'off',
      inputmode: 'url', placeholder: 'example.com', id: 'domain-name',
    });
    const errorSlot = h('div', { class: 'config-dialog-error' });
    const submit = h('button', { type: 'submit', class: 'btn btn-primary' }, 'Add domain');
    const form = h('form', { id: 'add-domain-form', novalidate: true },
      field('Domain name', input, 'The part after the @ of the addresses you send from: example.com, or a subdomain such as mail.example.com.'),
      errorSlot,
      h('div', { class: 'dialog-actions' },
        h('button', { type: 'button', class: 'btn btn-secondary', on: { click: () => close() } }, 'Cancel'),
        submit));
    form.addEventListener('submit', async (ev) => {
      ev.preventDefault();
      const name = input.value.trim();
      replace(errorSlot);
      input.removeAttribute('aria-invalid');
      if (!name) {
        replace(errorSlot, h('p', { class: 'form-error', role: 'alert' }, 'Type the domain to add, such as example.com.'));
        input.setAttribute('aria-invalid', 'true');
        input.focus();
        return;
      }
      submit.disabled = true;
      submit.textContent = 'Adding…';
      try {
        close(await api('/v1/domains', { method: 'POST', body: { name }, signal: ctx.signal }));
      } catch (err) {
        if (err.name === 'AbortError') return;
        replace(errorSlot, errorBox(err));
        input.setAttribute('aria-invalid', 'true');
        input.focus();
      } finally {
        submit.disabled = false;
        submit.textContent = 'Add domain';
      }
    });
    return form;
  });
  if (!created) return;
  toast(`Added ${created.name}. Publish its DNS records to verify it.`);
  ctx.navigate(`/domains/${enc(created.name)}`);
}
