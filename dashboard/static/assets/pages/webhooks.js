// Webhooks: the account's endpoints, and adding one. The endpoint form and
// the event types are shared with the endpoint's own page (webhook.js).
import { h, replace, uid } from '../dom.js';
import { api, ApiError } from '../api.js';
import { badge, button, dialog, errorBox, field, pageHeader, pager, secretOnce, table, time, toast, turnPage } from '../ui.js';

/** The event types an endpoint may subscribe to (docs/api.md "Event types"). */
export const eventGroups = [
  {
    label: 'Email',
    types: [
      ['email.queued', 'accepted for delivery'],
      ['email.scheduled', 'accepted for later'],
      ['email.delivered', 'the receiving server took it'],
      ['email.deferred', 'a temporary failure; retried'],
      ['email.bounced', 'a permanent failure'],
      ['email.failed', 'given up, or not attempted'],
      ['email.suppressed', 'the address is suppressed'],
      ['email.complained', 'marked as spam'],
      ['email.canceled', 'a scheduled send was canceled'],
    ],
  },
  {
    label: 'Domains',
    types: [
      ['domain.verified', 'every required record found'],
      ['domain.temporary_failure', 'a record went missing'],
      ['domain.failed', 'not verified in time'],
    ],
  },
];

const knownTypes = eventGroups.flatMap((g) => g.types.map(([t]) => t));

/** eventsSummary shows what an endpoint subscribes to, briefly. */
export function eventsSummary(events, { max = 3 } = {}) {
  if (events.includes('*')) return h('span', { class: 'hook-all' }, 'All events');
  const shown = events.slice(0, max);
  return h('span', { class: 'hook-events' },
    shown.map((e) => h('code', { class: 'hook-event' }, e)),
    events.length > max ? h('span', { class: 'muted small', title: events.slice(max).join(', ') }, `+${events.length - max} more`) : null);
}

/**
 * endpointForm builds the form of a new or changed endpoint. submit(body)
 * sends it and resolves with what to close the dialog with; a refusal is
 * shown in the form, with the fields it names marked.
 */
export function endpointForm(close, { initial = null, submitLabel, submit }) {
  const url = h('input', {
    type: 'url', name: 'url', required: true, autocomplete: 'off', spellcheck: 'false', inputmode: 'url',
    placeholder: 'https://app.example.com/hooks/mailroom', value: initial?.url || '',
  });
  const description = h('input', {
    type: 'text', name: 'description', maxlength: '1000', autocomplete: 'off',
    placeholder: 'Orders app, production', value: initial?.description || '',
  });
  const all = !initial || initial.events.includes('*');
  const name = uid('events-mode');
  const allRadio = h('input', { type: 'radio', name, value: 'all', checked: all });
  const someRadio = h('input', { type: 'radio', name, value: 'some', checked: !all });
  // Types the endpoint has that this page does not list (webhook.test, or
  // one added later) stay selectable so that an edit keeps them.
  const extra = (initial?.events || []).filter((e) => e !== '*' && !knownTypes.includes(e));
  const boxes = [];
  const box = (type, meaning) => {
    const b = h('input', { type: 'checkbox', name: 'events', value: type, checked: !all && !!initial?.events.includes(type) });
    boxes.push(b);
    return h('label', { class: 'hook-check' }, b,
      h('span', {}, h('code', {}, type), meaning ? h('span', { class: 'hint' }, meaning) : null));
  };
  const picker = h('div', { class: 'hook-picker', hidden: all },
    eventGroups.map((g) => h('fieldset', { class: 'hook-group' },
      h('legend', {}, g.label),
      g.types.map(([t, m]) => box(t, m)))),
    extra.length ? h('fieldset', { class: 'hook-group' }, h('legend', {}, 'Other'), extra.map((t) => box(t, ''))) : null);
  const sync = () => {
    picker.hidden = allRadio.checked;
  };
  allRadio.addEventListener('change', sync);
  someRadio.addEventListener('change', sync);

  const problem = h('div', { class: 'hook-problem' });
  const save = h('button', { type: 'submit', class: 'btn btn-primary' }, submitLabel);
  const fields = { url, description };
  const form = h('form', { novalidate: true },
    field('Endpoint URL', url, 'Mailroom POSTs each event here. Use https; plain http and private addresses work only where the operator allows them (as serve --dev does).'),
    field('Description', description, 'Optional: what listens there, so your team recognises it.'),
    h('fieldset', { class: 'hook-mode' },
      h('legend', {}, 'Events to send'),
      h('label', { class: 'hook-check' }, allRadio,
        h('span', {}, 'All events', h('span', { class: 'hint' }, 'Every type, including types added in later versions.'))),
      h('label', { class: 'hook-check' }, someRadio,
        h('span', {}, 'Only the events I choose')),
      picker),
    problem,
    h('div', { class: 'dialog-actions' },
      h('button', { type: 'button', class: 'btn btn-secondary', on: { click: () => close(undefined) } }, 'Cancel'),
      save));

  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    replace(problem);
    for (const el of [url, description]) el.removeAttribute('aria-invalid');
    const events = allRadio.checked ? ['*'] : boxes.filter((b) => b.checked).map((b) => b.value);
    if (!url.value.trim()) {
      replace(problem, h('p', { class: 'form-error', role: 'alert' }, 'Enter the URL that should receive the events.'));
      url.setAttribute('aria-invalid', 'true');
      url.focus();
      return;
    }
    if (!events.length) {
      replace(problem, h('p', { class: 'form-error', role: 'alert' }, 'Choose at least one event, or send all events.'));
      (boxes[0] || someRadio).focus();
      return;
    }
    save.disabled = true;
    try {
      close(await submit({ url: url.value.trim(), description: description.value.trim(), events }));
    } catch (err) {
      replace(problem, errorBox(err));
      if (err instanceof ApiError) {
        const named = err.details.map((d) => fields[String(d.field || '').split(/[.[]/)[0]]).filter(Boolean);
        for (const el of named) el.setAttribute('aria-invalid', 'true');
        (named[0] || url).focus();
      }
    } finally {
      save.disabled = false;
    }
  });
  return form;
}

/** addEndpoint asks for a new endpoint, shows its secret once, then opens it. */
async function addEndpoint(ctx) {
  const created = await dialog('Add a webhook endpoint', (close) => endpointForm(close, {
    submitLabel: 'Add endpoint',
    submit: (body) => api('/v1/webhooks', { method: 'POST', body }),
  }), { wide: true });
  if (!created) return;
  toast('Endpoint added.');
  await secretOnce('Your signing secret', 'signing secret', created.secret,
    'Mailroom signs every delivery to this endpoint with this secret. Copy it into your application now '
    + '(for example as MAILROOM_WEBHOOK_SECRET): it will not be shown again. If you lose it, rotate the secret on the endpoint’s page.');
  ctx.navigate(`/webhooks/${encodeURIComponent(created.id)}`);
}

function emptyState(ctx) {
  return h('section', { class: 'hook-empty card', 'aria-labelledby': 'hook-empty-title' },
    h('h2', { id: 'hook-empty-title' }, 'No webhook endpoints yet'),
    h('p', {}, 'Webhooks tell your application what happens to its mail as it happens: deliveries, bounces, '
      + 'complaints, suppressed sends and domain changes. Mailroom POSTs each event as JSON to every endpoint that subscribes to its type, '
      + 'and retries a failed delivery for about 28 hours.'),
    h('p', {}, 'Each delivery is signed the ', h('a', { href: 'https://www.standardwebhooks.com/', rel: 'noopener noreferrer', target: '_blank' }, 'Standard Webhooks'),
      ' way: the headers ', h('code', {}, 'webhook-id'), ', ', h('code', {}, 'webhook-timestamp'), ' and ',
      h('code', {}, 'webhook-signature'), ' (an HMAC-SHA256 keyed with the endpoint’s ', h('code', {}, 'whsec_…'),
      ' secret), so its libraries verify them for you.'),
    h('div', { class: 'actions' }, button('Add your first endpoint', () => addEndpoint(ctx), { kind: 'primary' })));
}

export default async function render(ctx) {
  ctx.setTitle('Webhooks');
  const region = h('section', { 'aria-labelledby': 'hook-list-title', class: 'hook-list' });
  let cursor = null;

  async function load(c) {
    const list = await api('/v1/webhooks', { query: { cursor: c, limit: 20 }, signal: ctx.signal });
    cursor = c;
    if (!list.data.length && !c) {
      replace(region, emptyState(ctx));
      return;
    }
    replace(region,
      h('h2', { id: 'hook-list-title', class: 'visually-hidden', tabindex: '-1' }, 'Endpoints'),
      table([
        {
          label: 'Endpoint',
          cell: (w) => h('div', {},
            h('a', { class: 'webhook-link row-title wrap-anywhere', href: `/webhooks/${encodeURIComponent(w.id)}` }, w.url),
            w.description ? h('div', { class: 'row-sub' }, w.description) : null),
        },
        { label: 'Events', cell: (w) => eventsSummary(w.events) },
        {
          label: 'Status',
          cell: (w) => h('div', {}, badge(w.enabled ? 'enabled' : 'disabled'),
            !w.enabled && w.disabledReason ? h('div', { class: 'row-sub' }, w.disabledReason) : null),
        },
        { label: 'Created', class: 'nowrap', cell: (w) => time(w.createdAt) },
      ], list.data, { id: 'webhooks', caption: 'Webhook endpoints' }),
      pager(list.nextCursor, (n) => page(n), cursor ? () => page(null) : null));
  }

  function page(c) {
    return turnPage(region, () => load(c), '.hook-list h2', ctx.signal);
  }

  await load(null);
  replace(ctx.main,
    pageHeader('Webhooks', {
      lead: 'Endpoints in your application that Mailroom notifies, signed, whenever something happens to your mail or domains.',
      actions: button('Add endpoint', () => addEndpoint(ctx), { kind: 'primary', id: 'add-endpoint' }),
    }),
    region);
}
