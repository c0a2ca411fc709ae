// API keys: the account's keys, creating one (shown once) and revoking one.
import { h, replace } from '../dom.js';
import { api, enc, ApiError } from '../api.js';
import { session } from '../session.js';
import { badge, button, confirm, dialog, errorBox, field, pageHeader, pager, secretOnce, table, time, toast, turnPage } from '../ui.js';

/** The scopes, in documented order, with what each lets a key do. */
const scopes = [
  ['send', 'Send mail, read the email log and events, manage suppressions.'],
  ['domains', 'Add, verify and remove sending domains.'],
  ['templates', 'Create, edit and delete templates.'],
  ['webhooks', 'Manage webhook endpoints, see their deliveries, replay events.'],
  ['keys', 'Create and revoke API keys: full control of the account.'],
];

/** A key's scopes and, for a key restricted to one sending domain, that domain. */
function scopeBadges(list, domain) {
  return h('span', { class: 'key-scopes' },
    list.map((s) => h('span', { class: 'key-scope' }, s)),
    domain ? h('span', { class: 'key-domain muted', title: 'This key may send from this domain only' }, `from ${domain} only`) : null);
}

export default async function render(ctx) {
  ctx.setTitle('API keys');
  const region = h('div', { id: 'api-keys-list' });
  let cursor = null;
  const me = () => session.current?.keyId;

  async function load(c = cursor) {
    const list = await api('/v1/api-keys', { query: { cursor: c, limit: 20 }, signal: ctx.signal });
    cursor = c;
    replace(region,
      table([
        {
          label: 'Name',
          cell: (k) => h('div', { class: 'key-name-cell' },
            h('span', { class: 'row-title wrap-anywhere key-name' }, k.name),
            k.keyId === me() ? h('span', { class: 'badge badge-info key-this', title: 'The dashboard is signed in with this key' }, 'this session') : null),
        },
        { label: 'Key ID', cell: (k) => h('code', { class: 'mono key-id' }, k.keyId) },
        { label: 'Scopes', cell: (k) => scopeBadges(k.scopes, k.domain) },
        { label: 'Status', cell: (k) => h('div', {}, badge(k.status)) },
        { label: 'Created', class: 'nowrap', cell: (k) => time(k.createdAt) },
        {
          label: 'Last used',
          class: 'nowrap',
          cell: (k) => (k.lastUsedAt ? time(k.lastUsedAt) : h('span', { class: 'muted' }, 'Never')),
        },
        { label: 'Revoked', class: 'nowrap', cell: (k) => time(k.revokedAt) },
        { label: '', class: 'key-actions', cell: (k) => (k.status === 'active' ? revokeButton(k) : null) },
      ], list.data, { id: 'api-keys', caption: 'API keys', empty: 'No keys yet. Create one for each application that uses the API.' }),
      pager(list.nextCursor, (n) => page(n), cursor ? () => page(null) : null));
  }

  function page(c) {
    return turnPage(region, () => load(c), '#keys-list-title', ctx.signal);
  }

  function revokeButton(k) {
    return button('Revoke', async () => {
      const mine = k.keyId === me();
      const ok = mine
        ? await confirm('Revoke the key of this session?',
          `This dashboard is signed in with “${k.name}” (${k.keyId}). Once it is revoked, every request with it is refused: `
          + 'the dashboard signs you out at its next request, and every application using this key stops working at once. '
          + 'Mail it already sent is still delivered. This cannot be undone.', 'Revoke and sign out')
        : await confirm(`Revoke “${k.name}”?`,
          `Applications that use the key ${k.keyId} stop working at once: their next request is refused. `
          + 'Mail it already sent is still delivered. This cannot be undone.', 'Revoke key');
      if (!ok) return;
      try {
        const revoked = await api(`/v1/api-keys/${enc(k.keyId)}`, { method: 'DELETE', signal: ctx.signal });
        toast(`The key “${revoked.name}” is revoked.`);
        // For this session's key, this next request is refused and the
        // dashboard signs out (app.js).
        await load();
        document.getElementById('keys-list-title')?.focus();
      } catch (err) {
        if (!ctx.signal.aborted && !(err instanceof ApiError && err.status === 401)) toast(err.message, 'error');
      }
    }, { class: 'btn btn-secondary btn-small', 'aria-label': `Revoke ${k.name} (${k.keyId})` });
  }

  async function create() {
    const made = await dialog('Create an API key', (close) => {
      const name = h('input', { type: 'text', name: 'name', required: true, maxlength: '128', autocomplete: 'off', placeholder: 'production app' });
      const boxes = scopes.map(([s]) => h('input', { type: 'checkbox', name: 'scopes', value: s, checked: s === 'send', id: `scope-${s}` }));
      const problem = h('div', {});
      const save = h('button', { type: 'submit', class: 'btn btn-primary' }, 'Create key');
      const form = h('form', { novalidate: true },
        field('Name', name, 'What uses this key, so you know which one to revoke later.'),
        h('fieldset', { class: 'key-scope-picker' },
          h('legend', {}, 'Scopes'),
          h('p', { class: 'hint' }, 'Give the key only what it needs.'),
          scopes.map(([s, meaning], i) => h('label', { class: 'key-scope-choice', for: `scope-${s}` },
            boxes[i],
            h('span', {}, h('strong', {}, s), h('span', { class: 'hint' }, meaning))))),
        problem,
        h('div', { class: 'dialog-actions' },
          h('button', { type: 'button', class: 'btn btn-secondary', on: { click: () => close(undefined) } }, 'Cancel'),
          save));
      form.addEventListener('submit', async (ev) => {
        ev.preventDefault();
        replace(problem);
        name.removeAttribute('aria-invalid');
        const chosen = boxes.filter((b) => b.checked).map((b) => b.value);
        if (!name.value.trim()) {
          replace(problem, h('p', { class: 'form-error', role: 'alert' }, 'Name the key.'));
          name.setAttribute('aria-invalid', 'true');
          name.focus();
          return;
        }
        if (!chosen.length) {
          replace(problem, h('p', { class: 'form-error', role: 'alert' }, 'Choose at least one scope.'));
          boxes[0].focus();
          return;
        }
        save.disabled = true;
        try {
          close(await api('/v1/api-keys', { method: 'POST', body: { name: name.value.trim(), scopes: chosen }, signal: ctx.signal }));
        } catch (err) {
          replace(problem, errorBox(err));
          if (err instanceof ApiError && err.details.some((d) => d.field === 'name')) {
            name.setAttribute('aria-invalid', 'true');
            name.focus();
          }
        } finally {
          save.disabled = false;
        }
      });
      return form;
    });
    if (!made) return;
    await secretOnce('Your new API key', 'API key', made.key,
      `Copy the key “${made.name}” now and keep it somewhere safe, such as your secrets manager: Mailroom stores only a digest of it and cannot show it again.`);
    toast(`The key “${made.name}” is ready.`);
    await load(null);
    document.getElementById('keys-list-title')?.focus();
  }

  await load(null);
  replace(ctx.main,
    pageHeader('API keys', {
      lead: 'Keys let your applications, and this dashboard, use the API. Give each application its own key with only the scopes it needs.',
      actions: button('Create key', create, { kind: 'primary', id: 'create-key' }),
    }),
    h('section', { 'aria-labelledby': 'keys-list-title' },
      h('div', { class: 'section-head' }, h('h2', { id: 'keys-list-title', tabindex: '-1' }, 'Keys')),
      region));
}
