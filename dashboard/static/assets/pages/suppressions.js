// Suppressions: the addresses Mailroom will not send to, why, looking one
// up, adding one by hand and taking one off the list.
import { h, replace } from '../dom.js';
import { api, enc, ApiError } from '../api.js';
import { button, confirm, dialog, errorBox, field, pageHeader, pager, table, time, toast, turnPage } from '../ui.js';

/** What each reason means, in a line (docs/api.md "Suppressions"). */
const reasons = {
  hard_bounce: { label: 'hard bounce', tone: 'bad', meaning: 'Bounced permanently: the mailbox does not exist. Stops all mail.' },
  complaint: { label: 'complaint', tone: 'bad', meaning: 'The recipient reported your mail as spam. Stops all mail.' },
  manual: { label: 'manual', tone: 'info', meaning: 'Added by hand or through the API. Stops all mail.' },
  unsubscribe: { label: 'unsubscribe', tone: 'warn', meaning: 'Unsubscribed with one click. Stops marketing mail only.' },
};

function reasonBadge(reason) {
  const r = reasons[reason] || { label: String(reason).replaceAll('_', ' '), tone: 'muted' };
  return h('span', { class: `badge badge-${r.tone}` }, r.label);
}

function reasonCell(s) {
  return h('div', {}, reasonBadge(s.reason),
    reasons[s.reason] ? h('div', { class: 'row-sub' }, reasons[s.reason].meaning) : null);
}

function messageLink(s) {
  return s.messageId
    ? h('a', { class: 'mono wrap-anywhere', href: `/messages/${encodeURIComponent(s.messageId)}` }, s.messageId)
    : h('span', { class: 'muted' }, '—');
}

/** What removing an entry means, by reason. */
function removeWarning(s) {
  const base = `Mailroom will send to ${s.address} again.`;
  switch (s.reason) {
    case 'hard_bounce':
      return `${base} It bounced permanently: unless the mailbox exists again, new mail will bounce too, and repeated bounces hurt your sending reputation.`;
    case 'complaint':
      return `${base} Its owner reported your mail as spam: remove it only if they asked to hear from you again.`;
    case 'unsubscribe':
      return `${base} Its owner unsubscribed: remove it only if they asked to receive marketing mail again.`;
    default:
      return base;
  }
}

export default async function render(ctx) {
  ctx.setTitle('Suppressions');
  const listRegion = h('div', { id: 'suppressions-list' });
  const lookupResult = h('div', { id: 'suppression-lookup', 'aria-live': 'polite' });
  let cursor = null;

  async function load(c = cursor) {
    const list = await api('/v1/suppressions', { query: { cursor: c, limit: 20 }, signal: ctx.signal });
    cursor = c;
    if (!list.data.length && c) return load(null); // the last entry of an older page went
    replace(listRegion,
      list.data.length
        ? table([
          { label: 'Address', cell: (s) => h('span', { class: 'row-title mono wrap-anywhere suppressed-address' }, s.address) },
          { label: 'Reason', cell: reasonCell },
          { label: 'Message', cell: messageLink },
          { label: 'Added', class: 'nowrap', cell: (s) => time(s.createdAt) },
          { label: '', class: 'supp-actions', cell: (s) => removeButton(s) },
        ], list.data, { id: 'suppressions', caption: 'Suppressed addresses' })
        : h('div', { class: 'empty', id: 'suppressions-empty' },
          h('p', { class: 'supp-empty-title' }, 'No suppressed addresses.'),
          h('p', {}, 'Mailroom adds an address here when mail to it bounces permanently, its owner complains, or unsubscribes. '
            + 'Add one by hand with “Add address” to stop all mail to it.')),
      pager(list.nextCursor, (n) => page(n), cursor ? () => page(null) : null));
  }

  function page(c) {
    return turnPage(listRegion, () => load(c), '#supp-list-title', ctx.signal);
  }

  function removeButton(s) {
    return button('Remove', async () => {
      const ok = await confirm(`Remove ${s.address}?`, removeWarning(s), 'Remove from list');
      if (!ok) return;
      try {
        await api(`/v1/suppressions/${enc(s.address)}`, { method: 'DELETE', signal: ctx.signal });
        toast(`${s.address} was removed: it receives mail again.`);
        if (lookupResult.querySelector(`[data-address="${CSS.escape(s.address)}"]`)) replace(lookupResult);
        await load();
        document.getElementById('supp-list-title')?.focus();
      } catch (err) {
        if (!ctx.signal.aborted) toast(err.message, 'error');
      }
    }, { class: 'btn btn-secondary btn-small', 'aria-label': `Remove ${s.address}` });
  }

  // ---- Looking one address up ----
  const query = h('input', {
    id: 'suppression-search', type: 'search', name: 'address', autocomplete: 'off', spellcheck: 'false',
    inputmode: 'email', placeholder: 'someone@example.com',
  });
  query.setAttribute('aria-describedby', 'suppression-search-hint');
  const lookup = h('form', { class: 'supp-search', role: 'search', 'aria-label': 'Look up an address', novalidate: true },
    h('div', { class: 'supp-search-row' },
      field('Look up an address', query),
      h('button', { type: 'submit', class: 'btn btn-secondary' }, 'Look up')),
    h('p', { class: 'hint', id: 'suppression-search-hint' }, 'Is mail to this address stopped, and why? Case does not matter.'));
  lookup.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    const address = query.value.trim();
    if (!address) {
      replace(lookupResult);
      query.focus();
      return;
    }
    try {
      const s = await api(`/v1/suppressions/${enc(address)}`, { signal: ctx.signal });
      replace(lookupResult, h('div', { class: 'card supp-found', dataset: { address: s.address } },
        h('div', { class: 'supp-found-head' },
          h('p', {}, h('strong', { class: 'mono wrap-anywhere' }, s.address), ' is suppressed.'),
          removeButton(s)),
        h('dl', { class: 'facts' },
          h('div', {}, h('dt', {}, 'Reason'), h('dd', {}, reasonCell(s))),
          h('div', {}, h('dt', {}, 'Message'), h('dd', {}, messageLink(s))),
          h('div', {}, h('dt', {}, 'Added'), h('dd', {}, time(s.createdAt))))));
    } catch (err) {
      if (ctx.signal.aborted) return;
      if (err instanceof ApiError && err.status === 404) {
        replace(lookupResult, h('div', { class: 'alert alert-info', role: 'status' },
          h('p', {}, h('strong', { class: 'wrap-anywhere' }, address), ' is not suppressed: Mailroom delivers mail to it.')));
      } else {
        replace(lookupResult, errorBox(err));
      }
    }
  });

  // ---- Adding one ----
  async function add() {
    const added = await dialog('Suppress an address', (close) => {
      const address = h('input', { type: 'email', name: 'address', required: true, autocomplete: 'off', spellcheck: 'false', placeholder: 'someone@example.com' });
      const problem = h('div', {});
      const save = h('button', { type: 'submit', class: 'btn btn-primary' }, 'Add address');
      const form = h('form', { novalidate: true },
        field('Email address', address, 'Mailroom stops sending any mail to it (reason “manual”) until you remove it. Case does not matter.'),
        problem,
        h('div', { class: 'dialog-actions' },
          h('button', { type: 'button', class: 'btn btn-secondary', on: { click: () => close(undefined) } }, 'Cancel'),
          save));
      form.addEventListener('submit', async (ev) => {
        ev.preventDefault();
        replace(problem);
        address.removeAttribute('aria-invalid');
        if (!address.value.trim()) {
          replace(problem, h('p', { class: 'form-error', role: 'alert' }, 'Enter the address to suppress.'));
          address.setAttribute('aria-invalid', 'true');
          address.focus();
          return;
        }
        save.disabled = true;
        try {
          // An address already there for another reason keeps it (200);
          // a manual entry, new or not, says the same thing.
          const s = await api('/v1/suppressions', { method: 'POST', body: { address: address.value.trim() }, signal: ctx.signal });
          close({ entry: s, existed: s.reason !== 'manual' });
        } catch (err) {
          replace(problem, errorBox(err));
          address.setAttribute('aria-invalid', 'true');
          address.focus();
        } finally {
          save.disabled = false;
        }
      });
      return form;
    });
    if (!added) return;
    const s = added.entry;
    toast(added.existed
      ? `${s.address} was already suppressed (${reasons[s.reason]?.label || s.reason}).`
      : `${s.address} is suppressed: Mailroom sends it no more mail.`);
    await load(null);
    document.getElementById('supp-list-title')?.focus();
  }

  await load(null);
  replace(ctx.main,
    pageHeader('Suppressions', {
      lead: 'Addresses Mailroom will not send to. A send to one is accepted but not attempted, and logged as suppressed.',
      actions: button('Add address', add, { kind: 'primary', id: 'add-suppression' }),
    }),
    h('section', { class: 'card supp-lookup', 'aria-label': 'Look up an address' }, lookup, lookupResult),
    h('section', { 'aria-labelledby': 'supp-list-title' },
      h('div', { class: 'section-head' }, h('h2', { id: 'supp-list-title', tabindex: '-1' }, 'Suppressed addresses')),
      listRegion));
}
