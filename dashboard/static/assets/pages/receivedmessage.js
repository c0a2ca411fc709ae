// One received message (GET /v1/received/{id}): who sent it to which of
// the account's addresses, the checks a receiver makes with each DKIM
// signature's verdict, the html in the same sandboxed frame as sent mail,
// the text, the header fields, the stored source, and the attachments as
// downloads (never opened in a page).
import { h, replace } from '../dom.js';
import { api, enc } from '../api.js';
import { copyButton, dl, errorBox, pageHeader, table, tabs, toast } from '../ui.js';
import { bytes, when } from '../format.js';
import { htmlPanel, textPanel } from '../contentpanels.js';
import { verdictBadge } from './verdicts.js';

const sourceLimit = 512 * 1024;

export default async function render(ctx) {
  const id = ctx.params[0];
  const m = await api(`/v1/received/${enc(id)}`, { signal: ctx.signal });
  ctx.setTitle(m.subject || 'Received message');
  const source = h('div', {}, h('p', { class: 'muted' }, 'Loading the stored source…'));
  replace(ctx.main,
    pageHeader(m.subject || '(no subject)', { back: { href: '/received', text: 'Received' } }),
    facts(m),
    h('section', { class: 'card', 'aria-labelledby': 'checks-title' },
      h('h2', { id: 'checks-title' }, 'Checks'),
      checks(m.authentication)),
    h('section', { class: 'card', 'aria-labelledby': 'content-title' },
      h('h2', { id: 'content-title' }, 'Content'),
      contentTabs(m, source, ctx)));
  try {
    const raw = await api(`/v1/received/${enc(id)}/raw`, { raw: true, signal: ctx.signal });
    const text = new TextDecoder('utf-8', { fatal: false }).decode(raw);
    const shown = text.length > sourceLimit ? text.slice(0, sourceLimit) : text;
    const download = h('a', {
      class: 'btn btn-secondary btn-small', download: `${id}.eml`,
      href: URL.createObjectURL(new Blob([raw], { type: 'application/octet-stream' })),
    }, 'Download .eml');
    replace(source,
      h('div', { class: 'preview-bar' },
        h('span', {}, `As stored: the service's Authentication-Results and Received fields, then the bytes received · ${bytes(raw.byteLength)}`,
          shown.length < text.length ? ` · showing the first ${bytes(sourceLimit)}` : ''),
        download),
      h('pre', { class: 'source', id: 'raw-source' }, shown));
  } catch (err) {
    if (err.name === 'AbortError') throw err;
    replace(source, errorBox(err));
  }
}

function facts(m) {
  const list = (xs) => (xs.length ? xs.join(', ') : '—');
  return h('section', { class: 'card', 'aria-label': 'Message details' }, dl([
    ['Received id', h('span', { class: 'record-value' }, h('code', {}, m.id), copyButton(m.id, 'received id')), true],
    ['From', m.from || '—'],
    ['To', list(m.to)],
    m.cc.length ? ['Cc', list(m.cc)] : null,
    ['Delivered to', h('span', { id: 'recipients' }, list(m.recipients))],
    ['Envelope sender', m.mailFrom ? m.mailFrom : h('span', { class: 'muted' }, '<> (none)')],
    ['Received', h('span', { title: m.receivedAt }, when(m.receivedAt))],
    ['Sent by', `${m.remoteIp}${m.helo ? ` (${m.helo})` : ''}`],
    m.messageId ? ['Message-ID', h('code', { class: 'wrap-anywhere' }, m.messageId)] : null,
    ['Size', bytes(m.size)],
    m.parseProblem ? ['Could not read', h('span', { id: 'parse-problem' }, `${m.parseProblem} (the message is stored as it was received)`)] : null,
  ]));
}

/** checks shows SPF, DKIM (each signature) and DMARC, as stored. */
function checks(a) {
  return h('div', { id: 'checks' },
    h('p', { class: 'verdicts' },
      verdictBadge('SPF', a.spf), ' ', verdictBadge('DKIM', a.dkim), ' ', verdictBadge('DMARC', a.dmarc)),
    h('p', { class: 'muted small' }, 'SPF is for the envelope sender, DMARC for the From domain. A fail is reported, not refused: the message is here for you to judge.'),
    a.dkimSignatures.length
      ? table([
        { label: 'Signing domain', class: 'wrap-anywhere', cell: (s) => s.domain },
        { label: 'Selector', class: 'wrap-anywhere', cell: (s) => h('code', {}, s.selector) },
        { label: 'Result', cell: (s) => verdictBadge('DKIM', s.result) },
      ], a.dkimSignatures, { id: 'dkim-signatures', caption: 'DKIM signatures' })
      : h('p', { class: 'muted', id: 'dkim-signatures' }, 'The message carries no DKIM signature.'));
}

function contentTabs(m, source, ctx) {
  return tabs('Message content', [
    m.html !== null ? { name: 'html', label: 'HTML', body: htmlPanel(m.html) } : null,
    { name: 'text', label: 'Text', body: textPanel(m.text) },
    m.attachments.length ? {
      name: 'attachments', label: `Attachments (${m.attachments.length})`, body: table([
        { label: 'File', class: 'wrap-anywhere', cell: (a) => a.filename || h('span', { class: 'muted' }, '(no name)') },
        { label: 'Type', cell: (a) => h('code', {}, a.contentType) },
        { label: 'Size', cell: (a) => bytes(a.size) },
        { label: '', cell: (a) => downloadButton(m.id, a, ctx) },
      ], m.attachments, { id: 'attachments' }),
    } : null,
    {
      name: 'headers', label: 'Header fields', body: table([
        { label: 'Field', class: 'nowrap', cell: (f) => h('code', {}, f.name) },
        { label: 'Value', class: 'wrap-anywhere', cell: (f) => f.value },
      ], m.headers, { id: 'headers', empty: 'No header fields could be read.' }),
    },
    { name: 'raw', label: 'Raw source', body: source },
  ]);
}

/**
 * downloadButton saves an attachment: the bytes are read with the key (a
 * plain link would carry none) and handed to the browser as
 * application/octet-stream under the attachment's name, so that it is
 * saved, never opened as a page, whatever type the sender gave it.
 */
function downloadButton(id, a, ctx) {
  const b = h('button', { type: 'button', class: 'btn btn-secondary btn-small', dataset: { attachment: a.id } }, 'Download');
  b.addEventListener('click', async () => {
    b.disabled = true;
    try {
      const bytesRead = await api(`/v1/received/${enc(id)}/attachments/${enc(a.id)}`, { raw: true, signal: ctx.signal });
      const url = URL.createObjectURL(new Blob([bytesRead], { type: 'application/octet-stream' }));
      const link = h('a', { href: url, download: a.filename || a.id, hidden: true });
      document.body.append(link);
      link.click();
      link.remove();
      setTimeout(() => URL.revokeObjectURL(url), 60_000);
    } catch (err) {
      if (err.name !== 'AbortError') toast(err.message, 'error');
    } finally {
      b.disabled = false;
    }
  });
  return b;
}
