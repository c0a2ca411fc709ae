// The dashboard's shared pieces: page headers, badges, tables, forms,
// dialogs, copy buttons and notices. Each builds DOM through h(), so text
// from the API is never parsed as HTML.
import { h, uid } from './dom.js';
import { ago, due, when } from './format.js';
import { ApiError } from './api.js';

/** pageHeader is the h1 of a page, with optional lead text and actions. */
export function pageHeader(title, { lead, actions, back } = {}) {
  return h('header', { class: 'page-header' },
    back ? h('a', { class: 'back-link', href: back.href }, '← ', back.text) : null,
    h('div', { class: 'page-title-row' },
      h('h1', { tabindex: '-1' }, title),
      actions ? h('div', { class: 'actions' }, actions) : null),
    lead ? h('p', { class: 'lead' }, lead) : null);
}

const tones = {
  delivered: 'good', verified: 'good', enabled: 'good', active: 'good', succeeded: 'good', sent: 'good',
  queued: 'info', scheduled: 'info', pending: 'info',
  deferred: 'warn', partially_delivered: 'warn', temporary_failure: 'warn', retrying: 'warn',
  bounced: 'bad', failed: 'bad', complained: 'bad', revoked: 'muted', disabled: 'muted',
  suppressed: 'muted', canceled: 'muted',
};

/** badge shows a state such as "delivered" in its colour, with the words too. */
export function badge(state) {
  const label = String(state || 'unknown').replaceAll('_', ' ');
  return h('span', { class: `badge badge-${tones[state] || 'muted'}` }, label);
}

/** time shows a relative time with the exact one in a tooltip. */
export function time(iso) {
  if (!iso) return h('span', { class: 'muted' }, '—');
  return h('time', { datetime: iso, title: when(iso) }, ago(iso));
}

/** dueTime is time for something scheduled: "due now" once its time has passed. */
export function dueTime(iso) {
  if (!iso) return h('span', { class: 'muted' }, '—');
  return h('time', { datetime: iso, title: when(iso) }, due(iso));
}

/**
 * table renders rows under headings. columns: [{label, cell(row) → node|string,
 * class}]; the label is repeated in data-label for the narrow-screen layout,
 * where each row becomes a card.
 */
export function table(columns, rows, { id, caption, empty = 'Nothing here yet.' } = {}) {
  if (!rows.length) return h('p', { class: 'empty', id }, empty);
  return h('div', { class: 'table-wrap' },
    h('table', { class: 'data', id },
      caption ? h('caption', { class: 'visually-hidden' }, caption) : null,
      h('thead', {}, h('tr', {}, columns.map((c) => h('th', { scope: 'col', class: c.class }, c.label)))),
      h('tbody', {}, rows.map((r) => h('tr', {},
        columns.map((c) => h('td', { class: c.class, 'data-label': c.label }, c.cell(r))))))));
}

/** field is a labelled form control with an optional hint. */
export function field(label, control, hint) {
  const id = control.id || uid('field');
  control.id = id;
  let hintEl = null;
  if (hint) {
    hintEl = h('span', { class: 'hint', id: `${id}-hint` }, hint);
    control.setAttribute('aria-describedby', `${id}-hint`);
  }
  return h('div', { class: 'field' }, h('label', { for: id }, label), control, hintEl);
}

/** errorBox explains a failed request; its request id helps the operator. */
export function errorBox(err) {
  if (err instanceof ApiError) {
    return h('div', { class: 'alert alert-error', role: 'alert' },
      h('p', {}, h('strong', {}, err.message)),
      // A lone detail that repeats the message says nothing more.
      err.details.length && !(err.details.length === 1 && err.message.includes(err.details[0].message)) ? h('ul', {}, err.details.map((d) => h('li', {},
        d.field ? h('code', {}, d.field) : null, d.field ? ': ' : '', d.message))) : null,
      h('p', { class: 'small muted' }, `${err.status} ${err.code}`, err.requestId ? ` · request ${err.requestId}` : ''));
  }
  return h('div', { class: 'alert alert-error', role: 'alert' }, h('p', {}, h('strong', {}, err.message || String(err))));
}

/** button is a <button type=button> running onClick, disabled while it runs. */
export function button(label, onClick, { kind = 'secondary', ...props } = {}) {
  const b = h('button', { type: 'button', class: `btn btn-${kind}`, ...props }, label);
  b.addEventListener('click', async (ev) => {
    if (b.disabled) return;
    // A disabled button loses the focus to <body>; give it back after, so
    // a keyboard user stays where they were.
    const hadFocus = document.activeElement === b;
    b.disabled = true;
    try {
      await onClick(ev);
    } finally {
      b.disabled = false;
      if (hadFocus && b.isConnected && document.activeElement === document.body) b.focus();
    }
  });
  return b;
}

/** copyButton copies text to the clipboard and says so. */
export function copyButton(text, what = 'value') {
  return button('Copy', async () => {
    try {
      await navigator.clipboard.writeText(text);
      toast(`Copied the ${what}.`);
    } catch {
      toast(`Could not copy: select the ${what} and copy it by hand.`, 'error');
    }
  }, { kind: 'ghost', class: 'btn btn-ghost btn-small', 'aria-label': `Copy the ${what}` });
}

/** toast shows a short notice that screen readers announce. */
export function toast(message, tone = 'info') {
  // An open modal dialog is in the top layer, above everything else:
  // its toasts go inside it, where they can be seen.
  const modal = document.querySelector('dialog[open]');
  let region = document.getElementById('toasts');
  if (modal) {
    region = modal.querySelector('.toasts') || modal.appendChild(h('div', { class: 'toasts', role: 'status', 'aria-live': 'polite' }));
  }
  const t = h('div', { class: `toast toast-${tone}` }, message);
  region.append(t);
  setTimeout(() => t.remove(), 5000);
}

/**
 * dialog opens a modal <dialog> (Escape closes it, focus stays inside) and
 * resolves with what its form returns: build(close) gives the body and
 * calls close(value) when done; closing otherwise resolves undefined.
 */
export function dialog(title, build, { wide = false, dismissable = true } = {}) {
  return new Promise((resolve) => {
    const titleId = uid('dialog-title');
    const d = h('dialog', { class: wide ? 'modal modal-wide' : 'modal', 'aria-labelledby': titleId });
    let result;
    const close = (value) => { result = value; d.close(); };
    d.append(h('h2', { id: titleId }, title), build(close));
    d.addEventListener('close', () => { d.remove(); resolve(result); });
    // A dialog that shows something once is closed only on purpose.
    if (!dismissable) d.addEventListener('cancel', (ev) => ev.preventDefault());
    document.body.append(d);
    d.showModal();
  });
}

/** confirm asks a yes/no question in a dialog. */
export function confirm(title, text, yes = 'Confirm', kind = 'danger') {
  return dialog(title, (close) => h('div', {},
    h('p', {}, text),
    h('div', { class: 'dialog-actions' },
      h('button', { type: 'button', class: 'btn btn-secondary', on: { click: () => close(false) } }, 'Cancel'),
      h('button', { type: 'button', class: `btn btn-${kind}`, on: { click: () => close(true) } }, yes))));
}

/** secretOnce shows a secret that will not be shown again, with a copy button. */
export function secretOnce(title, what, secret, note) {
  return dialog(title, (close) => h('div', {},
    h('p', {}, note || `Copy the ${what} now: it will not be shown again.`),
    h('div', { class: 'secret' }, h('code', { class: 'secret-value' }, secret), copyButton(secret, what)),
    h('div', { class: 'dialog-actions' },
      h('button', { type: 'button', class: 'btn btn-primary', on: { click: () => close(true) } }, 'I have copied it'))),
  { dismissable: false });
}

/** pager offers the next page of a cursor-paged list. */
export function pager(nextCursor, onNext, onFirst) {
  if (!nextCursor && !onFirst) return null;
  return h('nav', { class: 'pager', 'aria-label': 'Pages' },
    onFirst ? h('button', { type: 'button', class: 'btn btn-secondary', on: { click: onFirst } }, '← Newest') : null,
    nextCursor ? h('button', { type: 'button', class: 'btn btn-secondary', on: { click: () => onNext(nextCursor) } }, 'Older →') : null);
}

/**
 * turnPage loads another page of a list in place: region is busy while it
 * loads, the list's heading (focusSelector) takes the focus after, and a
 * failure is a toast, leaving the page as it was.
 */
export async function turnPage(region, load, focusSelector, signal) {
  region.setAttribute('aria-busy', 'true');
  try {
    await load();
    document.querySelector(focusSelector)?.focus();
  } catch (err) {
    if (!signal.aborted) toast(err.message, 'error');
  } finally {
    region.removeAttribute('aria-busy');
  }
}

/**
 * dl renders label/value pairs; a third item, wide, gives a long value such
 * as an id two columns on a wide screen, so it is not broken mid-token.
 */
export function dl(pairs) {
  return h('dl', { class: 'facts' }, pairs.filter(Boolean).map(([k, v, wide]) => h('div', { class: wide ? 'fact-wide' : undefined }, h('dt', {}, k), h('dd', {}, v))));
}

/**
 * tabs shows panels one at a time under a row of tabs, as the WAI-ARIA
 * Authoring Practices' tabs pattern has it: the first is shown, a click
 * selects one, and the arrow keys, Home and End move between them. Each
 * entry is {name, label, body}; its tab is #tab-NAME, its panel #panel-NAME.
 */
export function tabs(label, entries) {
  const list = entries.filter(Boolean);
  const tabButtons = list.map(({ name, label: text }, i) => h('button', {
    type: 'button', role: 'tab', id: `tab-${name}`, 'aria-controls': `panel-${name}`,
    'aria-selected': i === 0 ? 'true' : 'false', tabindex: i === 0 ? '0' : '-1',
  }, text));
  const panels = list.map(({ name, body }, i) => h('div', {
    role: 'tabpanel', id: `panel-${name}`, 'aria-labelledby': `tab-${name}`, tabindex: '0', hidden: i !== 0,
  }, body));
  const select = (i, focus) => {
    tabButtons.forEach((t, j) => {
      t.setAttribute('aria-selected', String(i === j));
      t.tabIndex = i === j ? 0 : -1;
      panels[j].hidden = i !== j;
    });
    if (focus) tabButtons[i].focus();
  };
  tabButtons.forEach((t, i) => {
    t.addEventListener('click', () => select(i, false));
    t.addEventListener('keydown', (ev) => {
      const n = { ArrowRight: i + 1, ArrowLeft: i - 1, Home: 0, End: tabButtons.length - 1 }[ev.key];
      if (n === undefined) return;
      ev.preventDefault();
      select((n + tabButtons.length) % tabButtons.length, true);
    });
  });
  return h('div', {}, h('div', { class: 'tabs', role: 'tablist', 'aria-label': label }, tabButtons), panels);
}
