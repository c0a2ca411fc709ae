// One webhook endpoint: its settings and actions (test, rotate the secret,
// enable or disable, edit, delete) and its deliveries, refreshed while the
// page is open.
import { h, replace } from '../dom.js';
import { api, enc } from '../api.js';
import { ago, when } from '../format.js';
import { pageHeader, badge, time, field, errorBox, button, toast, dialog, confirm, secretOnce, pager, dl } from '../ui.js';
import { endpointForm, eventsSummary } from './webhooks.js';

const refreshEvery = 5000;

const reasons = {
  200: 'OK', 201: 'Created', 202: 'Accepted', 204: 'No Content',
  301: 'Moved Permanently', 302: 'Found', 307: 'Temporary Redirect', 308: 'Permanent Redirect',
  400: 'Bad Request', 401: 'Unauthorized', 403: 'Forbidden', 404: 'Not Found', 405: 'Method Not Allowed',
  408: 'Request Timeout', 409: 'Conflict', 410: 'Gone', 413: 'Content Too Large', 415: 'Unsupported Media Type',
  422: 'Unprocessable Content', 429: 'Too Many Requests',
  500: 'Internal Server Error', 501: 'Not Implemented', 502: 'Bad Gateway', 503: 'Service Unavailable', 504: 'Gateway Timeout',
};

/** duration says how long an attempt took. */
function duration(ms) {
  if (ms < 1000) return `${ms} ms`;
  return `${(ms / 1000).toFixed(ms < 10000 ? 2 : 1)} s`;
}

/** explain turns an attempt's error into a sentence a person can act on. */
function explain(a) {
  const e = a.error || '';
  if (a.status === 'succeeded') return 'Your endpoint answered with a 2xx status: delivered.';
  if (a.statusCode !== null && a.statusCode >= 300 && a.statusCode < 400) {
    return `Your endpoint answered with a redirect (${a.statusCode}), which Mailroom does not follow. Point the endpoint at the final URL.`;
  }
  if (a.statusCode !== null) return `Your endpoint answered ${a.statusCode}${reasons[a.statusCode] ? ` ${reasons[a.statusCode]}` : ''}; only a 2xx status counts as delivered.`;
  if (/refused/i.test(e)) return `Nothing accepted the connection (${e}). Is your server running and listening at this URL?`;
  if (/timed out|timeout|deadline/i.test(e)) return `No answer in time (${e}). Answer within 15 s, and do slow work after answering.`;
  if (/resolve|no such host/i.test(e)) return `The host name did not resolve (${e}).`;
  if (/address not allowed/i.test(e)) return `The host resolves to an address webhooks may not reach (${e}).`;
  if (/tls|certificate|x509/i.test(e)) return `The TLS handshake failed (${e}). The endpoint needs a valid certificate.`;
  return e || 'The attempt failed.';
}

export default async function render(ctx) {
  const id = ctx.params[0];
  const base = `/v1/webhooks/${enc(id)}`;
  const top = h('div', {});
  let endpoint;
  try {
    endpoint = await api(base, { signal: ctx.signal });
  } catch (err) {
    if (err.status !== 404) throw err;
    ctx.setTitle('Endpoint not found');
    replace(ctx.main, pageHeader('Endpoint not found', {
      back: { href: '/webhooks', text: 'Webhooks' },
      lead: 'This account has no webhook endpoint with this ID: it may have been deleted.',
    }));
    return;
  }

  // ---- The endpoint: header, facts, actions ----

  async function act(fn) {
    try {
      await fn();
    } catch (err) {
      if (ctx.signal.aborted) return;
      toast(err.message, 'error');
    }
  }

  function show(ep, { refocus } = {}) {
    endpoint = ep;
    ctx.setTitle(ep.description || 'Webhook endpoint');
    const enabled = ep.enabled;
    const actions = [
      enabled ? button('Send test event', () => act(sendTest), { kind: 'primary', id: 'send-test', dataset: { action: 'test' } }) : null,
      button('Edit', () => act(edit), { dataset: { action: 'edit' }, id: 'edit-endpoint' }),
      enabled
        ? button('Disable', () => act(disable), { dataset: { action: 'toggle' }, id: 'toggle-endpoint' })
        : button('Enable', () => act(enable), { kind: 'primary', dataset: { action: 'toggle' }, id: 'toggle-endpoint' }),
    ];
    replace(top,
      pageHeader(ep.description || 'Webhook endpoint', {
        back: { href: '/webhooks', text: 'Webhooks' },
        lead: 'Where Mailroom POSTs your events, signed, and what happened to each delivery.',
        actions,
      }),
      enabled ? null : h('div', { class: 'alert alert-warn', role: 'status', id: 'hook-disabled' },
        h('p', {}, h('strong', {}, 'This endpoint is disabled.'), ep.disabledReason ? ` ${ep.disabledReason}` : ''),
        h('p', {}, 'Mailroom sends it nothing while it is off, and events that happen meanwhile are never delivered to it, '
          + 'even after you enable it again. Once it is enabled, replay the events you need from the deliveries below.')),
      h('section', { class: 'card', 'aria-labelledby': 'hook-facts-title' },
        h('h2', { id: 'hook-facts-title' }, 'Endpoint'),
        dl([
          ['URL', h('span', { class: 'mono wrap-anywhere', id: 'hook-url' }, ep.url)],
          ['Status', h('span', { class: 'hook-status' }, badge(enabled ? 'enabled' : 'disabled'),
            !enabled && ep.disabledReason ? h('span', { class: 'small muted' }, ` ${ep.disabledReason}`) : null)],
          ['Events', eventsSummary(ep.events, { max: 20 })],
          ['Description', ep.description ? ep.description : h('span', { class: 'muted' }, 'None')],
          ['Created', h('span', {}, when(ep.createdAt))],
          ['Last changed', h('span', {}, when(ep.updatedAt))],
          ['Endpoint ID', h('span', { class: 'mono wrap-anywhere' }, ep.id)],
        ])),
      h('div', { class: 'grid-2' },
        h('section', { class: 'card', 'aria-labelledby': 'hook-secret-title' },
          h('h2', { id: 'hook-secret-title' }, 'Signing secret'),
          h('p', { class: 'small' }, 'Each delivery carries ', h('code', {}, 'webhook-id'), ', ', h('code', {}, 'webhook-timestamp'),
            ' and ', h('code', {}, 'webhook-signature'), ' headers (Standard Webhooks). Verify the signature with the endpoint’s ',
            h('code', {}, 'whsec_…'), ' secret before trusting a delivery. The secret was shown once, when the endpoint was added.'),
          ep.secretRotation
            ? h('p', { class: 'alert alert-info small', id: 'hook-rotation' },
              'Secret rotated: the previous secret keeps signing beside the new one until ',
              h('time', { datetime: ep.secretRotation.previousSecretExpiresAt }, when(ep.secretRotation.previousSecretExpiresAt)), '.')
            : null,
          button('Rotate secret', () => act(rotate), { id: 'rotate-secret', dataset: { action: 'rotate' } })),
        h('section', { class: 'card', 'aria-labelledby': 'hook-delete-title' },
          h('h2', { id: 'hook-delete-title' }, 'Delete endpoint'),
          h('p', { class: 'small' }, 'Mailroom stops delivering to this URL at once. Pending deliveries and the delivery log below are deleted with it.'),
          button('Delete endpoint', () => act(remove), { kind: 'danger', id: 'delete-endpoint', dataset: { action: 'delete' } }))));
    if (refocus) top.querySelector(`[data-action="${refocus}"]`)?.focus();
    deliveries.replayable(enabled);
  }

  async function sendTest() {
    const ev = await api(`${base}/test`, { method: 'POST', signal: ctx.signal });
    toast(`Test event ${ev.id} queued: its delivery shows below within moments.`);
    deliveries.refreshSoon();
  }

  async function edit() {
    const saved = await dialog('Edit endpoint', (close) => endpointForm(close, {
      initial: endpoint,
      submitLabel: 'Save changes',
      submit: (body) => api(base, { method: 'PATCH', body, signal: ctx.signal }),
    }), { wide: true });
    if (!saved) return;
    show(saved, { refocus: 'edit' });
    toast('Endpoint saved.');
  }

  async function disable() {
    const ok = await confirm('Disable this endpoint?',
      'Mailroom stops delivering to it and drops the deliveries still pending, retries included. Events that happen while it is '
      + 'disabled are never delivered to it, not even after you enable it again.', 'Disable endpoint');
    if (!ok) return;
    show(await api(base, { method: 'PATCH', body: { enabled: false }, signal: ctx.signal }), { refocus: 'toggle' });
    toast('Endpoint disabled.');
  }

  async function enable() {
    show(await api(base, { method: 'PATCH', body: { enabled: true }, signal: ctx.signal }), { refocus: 'toggle' });
    toast('Endpoint enabled: new events are delivered to it again.');
  }

  async function rotate() {
    const ok = await confirm('Rotate the signing secret?',
      'Mailroom makes a new secret and shows it once. The current secret keeps signing beside the new one for 24 hours, '
      + 'so you can deploy the new secret without failing a delivery. Rotating again within those 24 hours retires the oldest secret at once.',
      'Rotate secret', 'primary');
    if (!ok) return;
    const res = await api(`${base}/rotate-secret`, { method: 'POST', signal: ctx.signal });
    await secretOnce('Your new signing secret', 'signing secret', res.secret,
      `Copy the new secret now: it will not be shown again. The old secret keeps signing beside it until ${when(res.previousSecretExpiresAt)} `
      + '(24 hours), so deliveries verify with either until you have deployed this one.');
    toast('Secret rotated.');
    show(await api(base, { signal: ctx.signal }), { refocus: 'rotate' });
  }

  async function remove() {
    const ok = await confirm('Delete this endpoint?',
      `Mailroom stops delivering to ${endpoint.url} at once, and deletes its pending deliveries and its delivery log. This cannot be undone.`,
      'Delete endpoint');
    if (!ok) return;
    await api(base, { method: 'DELETE', signal: ctx.signal });
    toast('Endpoint deleted.');
    ctx.navigate('/webhooks');
  }

  // ---- The deliveries, refreshed every few seconds ----

  const deliveries = deliveriesSection(ctx, base, id);
  show(endpoint);
  await deliveries.load();
  replace(ctx.main, top, deliveries.el);
  deliveries.start();
}

/**
 * deliveriesSection lists the endpoint's attempts. Refreshing keeps the
 * rows already shown (rows are keyed by attempt id, new ones are inserted
 * above them), so focus and open response bodies stay where they are.
 */
function deliveriesSection(ctx, base, endpointId) {
  let status = '';
  let cursor = null;
  let next = undefined; // the nextCursor shown in the pager
  let timer = 0;
  let loading = null;
  let canReplay = true; // a disabled endpoint takes no replay
  let last = null; // the page shown: [data, nextCursor]
  const rows = new Map(); // attempt id → <tr>
  const statusSelect = h('select', { id: 'delivery-status', name: 'status' },
    h('option', { value: '' }, 'All'),
    h('option', { value: 'succeeded' }, 'Succeeded'),
    h('option', { value: 'failed' }, 'Failed'));
  const live = h('span', { class: 'live', id: 'deliveries-live', title: `Refreshes every ${refreshEvery / 1000} seconds` }, 'Live');
  const problem = h('div', {});
  const tbody = h('tbody', {});
  const tableWrap = h('div', { class: 'table-wrap' },
    h('table', { class: 'data hook-attempts', id: 'deliveries' },
      h('caption', { class: 'visually-hidden' }, 'Delivery attempts, newest first'),
      h('thead', {}, h('tr', {}, ['Event', 'Result', 'Response', 'Time', ''].map((l) => h('th', { scope: 'col' }, l)))),
      tbody));
  const empty = h('div', { class: 'empty', id: 'deliveries-empty' });
  const list = h('div', {});
  const pagerSlot = h('div', {});
  const heading = h('h2', { id: 'deliveries-title', tabindex: '-1' }, 'Recent deliveries');
  const el = h('section', { class: 'card hook-deliveries', 'aria-labelledby': 'deliveries-title' },
    h('div', { class: 'section-head' },
      h('div', { class: 'hook-deliveries-title' }, heading, live),
      h('div', { class: 'hook-filter' }, field('Status', statusSelect))),
    h('p', { class: 'small muted hook-deliveries-lead' }, 'Every attempt to deliver an event to this endpoint, newest first, with your endpoint’s answer. '
      + 'A failed delivery is retried after 5 s, 5 min, 30 min, 2 h, 5 h, 10 h and 10 h.'),
    problem, list, pagerSlot);

  statusSelect.addEventListener('change', () => {
    status = statusSelect.value;
    reset();
  });

  function reset(c = null) {
    cursor = c;
    rows.clear();
    tbody.replaceChildren();
    next = undefined;
    el.setAttribute('aria-busy', 'true');
    refresh().finally(() => el.removeAttribute('aria-busy'));
  }

  function row(a, replayable) {
    const code = a.statusCode === null
      ? h('span', { class: 'muted' }, 'No response')
      : h('span', { class: 'hook-code' }, String(a.statusCode), reasons[a.statusCode] ? h('span', { class: 'muted' }, ` ${reasons[a.statusCode]}`) : null);
    const replay = replayable && canReplay
      ? button('Replay', async () => {
        try {
          const res = await api(`/v1/events/${enc(a.eventId)}/replay`, { method: 'POST', query: { endpoint: endpointId }, signal: ctx.signal });
          toast(`Event ${res.eventId} queued again for this endpoint: a new delivery follows within moments.`);
          refreshSoon();
        } catch (err) {
          if (!ctx.signal.aborted) toast(err.message, 'error');
        }
      }, { class: 'btn btn-secondary btn-small', 'aria-label': `Replay ${a.type} event ${a.eventId}` })
      : null;
    // Each cell holds one element: on a phone a cell is a grid of its
    // label and that element.
    return h('tr', { dataset: { id: a.id, event: a.eventId } },
      h('td', { 'data-label': 'Event', class: 'hook-event-cell' }, h('div', {},
        h('div', { class: 'event-type' }, a.type),
        h('div', { class: 'row-sub mono wrap-anywhere' }, a.eventId))),
      h('td', { 'data-label': 'Result', class: 'hook-result' }, h('div', {},
        h('div', {}, badge(a.status), ' ', h('span', { class: 'small muted hook-attempt' }, `attempt ${a.attempt}`)),
        // Once its time has passed the next attempt is (or soon is) a row of its own.
        a.nextAttemptAt && Date.parse(a.nextAttemptAt) > Date.now()
          ? h('div', { class: 'row-sub hook-next' }, 'Next try ', h('time', { datetime: a.nextAttemptAt, title: when(a.nextAttemptAt), dataset: { ago: '' } }, ago(a.nextAttemptAt)))
          : null)),
      h('td', { 'data-label': 'Response', class: 'hook-response' }, h('div', {},
        h('div', { class: 'hook-code-line' }, code, h('span', { class: 'muted small' }, ` · ${duration(a.durationMs)}`)),
        a.status === 'failed' ? h('div', { class: 'hook-error small' }, explain(a)) : null,
        a.responseBody
          ? h('details', { class: 'hook-body' },
            h('summary', {}, 'Response body'),
            h('pre', { class: 'text-part' }, a.responseBody))
          : h('div', { class: 'row-sub' }, 'Empty body'))),
      h('td', { 'data-label': 'Time', class: 'nowrap' },
        h('time', { datetime: a.createdAt, title: when(a.createdAt), dataset: { ago: '' } }, ago(a.createdAt))),
      h('td', { 'data-label': '', class: 'hook-row-actions' }, replay));
  }

  function sig(a) {
    return `${a.status}|${a.statusCode}|${a.nextAttemptAt}|${a.durationMs}`;
  }

  function draw(data, nextCursor) {
    last = [data, nextCursor];
    if (!data.length) {
      rows.clear();
      tbody.replaceChildren();
      replace(empty, status
        ? `No ${status} deliveries${cursor ? ' on this page' : ''}.`
        : 'No deliveries yet. Send a test event to see one: it shows here within moments, with your endpoint’s answer.');
      if (list.firstChild !== empty) replace(list, empty);
    } else {
      if (list.firstChild !== tableWrap) replace(list, tableWrap);
      // The first attempt of an event on the page (the newest) offers the
      // replay; older attempts of it do not repeat the button.
      const seen = new Set();
      const want = data.map((a) => {
        const replayable = !seen.has(a.eventId) && canReplay;
        seen.add(a.eventId);
        let r = rows.get(a.id);
        const key = `${sig(a)}|${replayable}`;
        if (!r || r.dataset.key !== key) {
          const fresh = row(a, replayable);
          fresh.dataset.key = key;
          if (r) r.replaceWith(fresh);
          r = fresh;
          rows.set(a.id, r);
        }
        return r;
      });
      want.forEach((r, i) => {
        if (tbody.children[i] !== r) tbody.insertBefore(r, tbody.children[i] || null);
      });
      const keep = new Set(want);
      for (const r of [...tbody.children]) {
        if (!keep.has(r)) {
          rows.delete(r.dataset.id);
          r.remove();
        }
      }
      for (const t of tbody.querySelectorAll('.hook-next time')) {
        if (Date.parse(t.dateTime) <= Date.now()) t.closest('.hook-next').remove();
      }
      for (const t of tbody.querySelectorAll('time[data-ago]')) t.textContent = ago(t.dateTime);
    }
    if (nextCursor !== next) {
      next = nextCursor;
      const hadFocus = pagerSlot.contains(document.activeElement) ? document.activeElement.textContent : null;
      replace(pagerSlot, pager(nextCursor, (c) => page(c), cursor ? () => page(null) : null));
      if (hadFocus) [...pagerSlot.querySelectorAll('button')].find((b) => b.textContent === hadFocus)?.focus();
    }
    live.hidden = !!cursor;
  }

  async function page(c) {
    reset(c);
    await loading;
    heading.focus();
  }

  async function refresh() {
    if (loading) return loading;
    loading = (async () => {
      try {
        const res = await api(`${base}/deliveries`, { query: { status, cursor, limit: 20 }, signal: ctx.signal });
        replace(problem);
        draw(res.data, res.nextCursor);
      } catch (err) {
        if (ctx.signal.aborted || err.name === 'AbortError') return;
        replace(problem, errorBox(err));
      } finally {
        loading = null;
      }
    })();
    return loading;
  }

  function schedule(ms) {
    clearTimeout(timer);
    if (ctx.signal.aborted) return;
    timer = setTimeout(async () => {
      // Older pages do not change; the newest page is watched.
      if (!cursor && !document.hidden) await refresh();
      schedule(refreshEvery);
    }, ms);
  }

  function refreshSoon() {
    schedule(700);
  }

  ctx.signal.addEventListener('abort', () => clearTimeout(timer));

  return {
    el,
    refreshSoon,
    /** replayable offers (or stops offering) the Replay buttons. */
    replayable(on) {
      if (on === canReplay) return;
      canReplay = on;
      if (last) draw(...last);
    },
    async load() {
      const res = await api(`${base}/deliveries`, { query: { limit: 20 }, signal: ctx.signal });
      draw(res.data, res.nextCursor);
    },
    start() {
      schedule(refreshEvery);
    },
  };
}
