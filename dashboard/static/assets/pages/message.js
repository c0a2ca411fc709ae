// One message of the log (GET /v1/messages/{id}): its recipients with their
// states and the receiving servers' replies (and, for tracked mail, their
// opens and clicks), a click-tracked message's links with their clicks
// (docs/api.md "Engagement tracking"), the event timeline, and the
// content as it was sent (GET …/raw): the html in a sandboxed frame, the
// text part and the signed source.
import { h, replace } from '../dom.js';
import { api, enc } from '../api.js';
import { badge, copyButton, dl, dueTime, errorBox, pageHeader, table, tabs, time } from '../ui.js';
import { bytes, when } from '../format.js';
import { parseMessage } from '../mime.js';
import { untracked } from '../preview.js';
import { htmlPanel, textPanel } from '../contentpanels.js';

const sourceLimit = 512 * 1024;

export default async function render(ctx) {
  const id = ctx.params[0];
  const m = await api(`/v1/messages/${enc(id)}`, { signal: ctx.signal });
  ctx.setTitle(m.subject || 'Message');
  const content = h('section', { class: 'card', 'aria-labelledby': 'content-title' },
    h('h2', { id: 'content-title' }, 'Content'),
    h('p', { class: 'muted' }, 'Loading the message as it was sent…'));
  replace(ctx.main,
    pageHeader(m.subject || '(no subject)', {
      back: { href: '/messages', text: 'Email log' },
      actions: badge(m.status),
    }),
    facts(m),
    h('section', { class: 'card', 'aria-labelledby': 'recipients-title' },
      h('h2', { id: 'recipients-title' }, 'Recipients'),
      recipients(m)),
    links(m),
    h('section', { class: 'card', 'aria-labelledby': 'timeline-title' },
      h('h2', { id: 'timeline-title' }, 'Timeline'),
      timelineWithOlder(m, ctx)),
    content);

  try {
    const raw = await api(`/v1/messages/${enc(id)}/raw`, { raw: true, signal: ctx.signal });
    const parsed = parseMessage(raw);
    const tracked = m.tracking && (m.tracking.opens || m.tracking.clicks);
    if (tracked && parsed.html !== null) parsed.html = untracked(parsed.html, m.links || []);
    replace(content, h('h2', { id: 'content-title' }, 'Content'), contentTabs(parsed, raw.byteLength, id, tracked));
  } catch (err) {
    if (err.name === 'AbortError') throw err;
    replace(content, h('h2', { id: 'content-title' }, 'Content'), errorBox(err));
  }
}

function facts(m) {
  const list = (xs) => (xs.length ? xs.join(', ') : null);
  return h('section', { class: 'card', 'aria-label': 'Message details' }, dl([
    ['Message id', h('span', { class: 'record-value' }, h('code', {}, m.id), copyButton(m.id, 'message id')), true],
    ['From', m.from],
    ['To', list(m.to) || '—'],
    m.cc.length ? ['Cc', list(m.cc)] : null,
    m.bcc.length ? ['Bcc', list(m.bcc)] : null,
    m.replyTo.length ? ['Reply-To', list(m.replyTo)] : null,
    ['Created', h('span', { title: m.createdAt }, when(m.createdAt))],
    m.scheduledAt ? ['Scheduled for', h('span', { title: m.scheduledAt }, when(m.scheduledAt))] : null,
    ['Category', m.category],
    m.template ? ['Template', h('a', { href: `/templates/${encodeURIComponent(m.template.id)}` }, `${m.template.name || m.template.id} (version ${m.template.version})`)] : null,
    Object.keys(m.tags).length ? ['Tags', h('span', {}, Object.entries(m.tags).map(([k, v]) => h('span', { class: 'tag' }, `${k}:${v}`)))] : null,
    m.idempotencyKey ? ['Idempotency key', h('code', {}, m.idempotencyKey)] : null,
    m.requireTls ? ['TLS required', h('span', { id: 'require-tls' }, 'REQUIRETLS: verified TLS all the way, or a 5.7.30 bounce')] : null,
    tracked(m) ? ['Tracking', h('span', { id: 'tracking' }, trackingText(m.tracking))] : null,
  ]));
}

/** tracked says whether anything of the message is tracked. */
function tracked(m) {
  return Boolean(m.tracking && (m.tracking.opens || m.tracking.clicks));
}

function trackingText(t) {
  return [t.opens ? 'opens' : null, t.clicks ? 'clicks' : null].filter(Boolean).join(' and ');
}

/**
 * links is a click-tracked message's links in the order of its html, each
 * with its clicks from every recipient (automated ones included: the
 * timeline marks those); nothing for a message not click-tracked.
 */
function links(m) {
  if (!m.tracking || !m.tracking.clicks) return null;
  const body = m.links && m.links.length
    ? table([
      { label: 'Link', cell: (l) => h('span', { class: 'mono link-url' }, l.url), class: 'wrap-anywhere' },
      { label: 'Clicks', cell: (l) => h('span', { class: 'link-clicks' }, String(l.clicks)) },
    ], m.links, { id: 'links' })
    : h('p', { class: 'muted', id: 'links' }, 'No tracked links yet: they are listed once the message’s copies are made.');
  return h('section', { class: 'card', 'aria-labelledby': 'links-title' },
    h('h2', { id: 'links-title' }, 'Links'), body);
}

/**
 * deferralReasons say in words why a recipient was put back in the queue
 * (docs/api.md "How mail leaves"); a reason not listed shows as it is.
 */
const deferralReasons = {
  throttled: 'throttled by the receiver',
  greylisted: 'greylisted',
  site_suspended: 'site suspended after throttling',
  tls_required: 'TLS required',
  connection: 'connection failed',
  dns: 'DNS lookup failed',
  temporary: 'temporary failure',
};

function deferralReason(reason) {
  return deferralReasons[reason] || reason;
}

/** tlsPolicies name the TLS policy of an attempt (docs/api.md "TLS policy"). */
const tlsPolicies = {
  requiretls: 'REQUIRETLS',
  'mta-sts': 'MTA-STS',
  enforced: 'domain enforces TLS',
  opportunistic: 'opportunistic',
};

/**
 * recipientTLS shows the TLS of a recipient's last attempt: its version
 * and cipher, whether the certificate verified and under which policy;
 * none in clear text; a dash before any session.
 */
function recipientTLS(r) {
  if (r.tls) {
    return h('span', { class: 'recipient-tls', dataset: { verified: String(r.tls.verified), policy: r.tls.policy } },
      h('span', { class: 'mono' }, `${r.tls.version} ${r.tls.cipher}`),
      h('div', { class: 'row-sub' },
        `${r.tls.verified ? 'verified' : 'not verified'} · ${tlsPolicies[r.tls.policy] || r.tls.policy}`));
  }
  if (r.unencrypted) {
    return h('span', { class: 'recipient-tls', dataset: { plaintext: 'true' } }, 'none (plaintext)');
  }
  return h('span', { class: 'muted' }, '—');
}

function recipients(m) {
  return table([
    { label: 'Address', cell: (r) => h('span', { class: 'row-title' }, r.address), class: 'wrap-anywhere' },
    {
      label: 'Status',
      // A deferred recipient says why it waits; one that went on keeps
      // the reason of its last deferral, as history.
      cell: (r) => h('span', {},
        badge(r.status),
        r.lastDeferralReason
          ? h('div', { class: 'row-sub deferral-reason', dataset: { reason: r.lastDeferralReason } },
            r.status === 'deferred' ? deferralReason(r.lastDeferralReason) : `last deferred: ${deferralReason(r.lastDeferralReason)}`)
          : null),
    },
    { label: 'Attempts', cell: (r) => String(r.attempts) },
    {
      label: 'Last reply',
      cell: (r) => (r.smtpCode || r.smtpResponse
        ? h('span', { class: 'mono' }, reply(r.smtpCode, r.smtpResponse))
        : h('span', { class: 'muted' }, r.status === 'queued' ? 'not attempted yet' : '—')),
      class: 'wrap-anywhere',
    },
    {
      label: 'When',
      cell: (r) => h('span', {},
        r.lastAttemptAt ? time(r.lastAttemptAt) : null,
        r.nextAttemptAt ? h('div', { class: 'row-sub' }, 'next attempt ', dueTime(r.nextAttemptAt)) : null,
        r.mx ? h('div', { class: 'row-sub' }, `via ${r.mx}`) : null,
        !r.lastAttemptAt && !r.nextAttemptAt && !r.mx ? '—' : null),
    },
    {
      // The destination site of the last attempt: a provider's name, or
      // the destination's MX hosts (docs/api.md "How mail leaves").
      label: 'Site',
      cell: (r) => (r.site ? h('span', { class: 'recipient-site' }, r.site) : h('span', { class: 'muted' }, '—')),
      class: 'wrap-anywhere',
    },
    { label: 'TLS', cell: recipientTLS, class: 'wrap-anywhere' },
    // Engagement, for tracked mail only (docs/api.md "Engagement
    // tracking"): counts of every open and click, automated ones too.
    m.tracking && m.tracking.opens
      ? { label: 'Opens', cell: (r) => h('span', { class: 'recipient-opens' }, String(r.opens || 0)) } : null,
    m.tracking && m.tracking.clicks
      ? { label: 'Clicks', cell: (r) => h('span', { class: 'recipient-clicks' }, String(r.clicks || 0)) } : null,
  ].filter(Boolean), m.recipients, { id: 'recipients', empty: 'No recipients.' });
}

/** reply is an SMTP reply as the server wrote it: the code once. */
function reply(code, text) {
  if (!text) return code ? String(code) : '';
  return code && !text.startsWith(String(code)) ? `${code} ${text}` : text;
}

const eventTones = {
  'email.delivered': 'good', 'email.bounced': 'bad', 'email.failed': 'bad', 'email.complained': 'bad',
  'email.deferred': 'warn', 'email.suppressed': 'warn', 'email.opened': 'good', 'email.clicked': 'good',
};

/**
 * timelineWithOlder is the timeline the message came with and, when the
 * API cut it to its newest events (olderEventsCursor), a button that reads
 * the older ones from GET /v1/events?messageId=, a page at a time.
 */
function timelineWithOlder(m, ctx) {
  let events = m.events || [];
  let cursor = m.olderEventsCursor || null;
  const list = h('div', {}, timeline(events));
  if (!cursor) return list;
  const note = h('p', { class: 'muted small', id: 'timeline-cut' });
  const more = h('button', { type: 'button', class: 'btn btn-secondary btn-small' }, 'Show older events');
  const problem = h('div', {});
  const say = () => {
    note.textContent = cursor
      ? `Showing the newest ${events.length} events; this message has older ones.`
      : `Showing all ${events.length} events.`;
    more.hidden = !cursor;
  };
  more.addEventListener('click', async () => {
    more.disabled = true;
    try {
      const page = await api('/v1/events', { query: { messageId: m.id, cursor, limit: 100 }, signal: ctx.signal });
      const older = page.data.map((e) => ({ id: e.id, type: e.type, createdAt: e.createdAt, recipient: e.recipient, detail: e.data }));
      events = [...older, ...events];
      cursor = page.nextCursor;
      replace(list, timeline(events));
      replace(problem);
      say();
    } catch (err) {
      if (err.name === 'AbortError') return;
      replace(problem, errorBox(err));
    } finally {
      more.disabled = false;
    }
  });
  say();
  return h('div', {}, note, list, h('div', { class: 'preview-bar' }, more), problem);
}

/** timeline lists the events oldest first, as a story reads. */
function timeline(events) {
  if (!events.length) return h('p', { class: 'muted', id: 'timeline' }, 'No events yet.');
  const sorted = [...events].sort((a, b) => (a.createdAt < b.createdAt ? -1 : a.createdAt > b.createdAt ? 1 : a.id < b.id ? -1 : 1));
  return h('ol', { class: 'timeline', id: 'timeline' }, sorted.map((e) => {
    const d = e.detail || {};
    const said = reply(d.smtpCode, d.smtpResponse);
    return h('li', { class: `tone-${eventTones[e.type] || 'info'}` },
      h('div', {}, h('span', { class: 'event-type' }, e.type), ' · ', time(e.createdAt)),
      e.recipient ? h('div', { class: 'event-detail' }, e.recipient) : null,
      said ? h('div', { class: 'event-detail mono' }, said) : null,
      d.mx ? h('div', { class: 'event-detail' }, `MX ${d.mx}`, d.site ? ` · site ${d.site}` : '', d.attempt ? ` · attempt ${d.attempt}` : '') : null,
      d.reason ? h('div', { class: 'event-detail' }, `Why: ${deferralReason(d.reason)}`) : null,
      d.bounceType ? h('div', { class: 'event-detail' }, `${d.bounceType} bounce`, d.async ? ' (reported later by the receiver)' : '') : null,
      d.reportText ? h('details', { class: 'event-detail' }, h('summary', {}, 'What the receiver reported'), h('pre', { class: 'text-part' }, d.reportText)) : null,
      engagement(e.type, d));
  }));
}

/**
 * engagement shows what an email.opened or email.clicked event tells: the
 * link clicked, the client (its truncated address and agent), and whether
 * it looked automated (machine: an image proxy, a link scanner).
 */
function engagement(type, d) {
  if (type !== 'email.opened' && type !== 'email.clicked') return null;
  return h('div', { class: 'event-engagement' },
    d.url ? h('div', { class: 'event-detail mono wrap-anywhere event-url' }, d.url) : null,
    d.machine
      ? h('div', { class: 'event-detail event-machine' }, h('span', { class: 'badge badge-warn' }, 'machine'),
        ' looked automated (an image proxy, a link scanner or a prefetch)')
      : null,
    d.ip || d.userAgent
      ? h('div', { class: 'event-detail muted small' }, [d.ip ? `from ${d.ip}` : null, d.userAgent || null].filter(Boolean).join(' · '))
      : null);
}

function contentTabs(parsed, size, id, tracked) {
  const shown = parsed.source.length > sourceLimit ? parsed.source.slice(0, sourceLimit) : parsed.source;
  const download = h('a', { class: 'btn btn-secondary btn-small', download: `${id}.eml`, href: URL.createObjectURL(new Blob([parsed.source], { type: 'message/rfc822' })) }, 'Download .eml');
  return tabs('Message content', [
    parsed.html !== null ? { name: 'html', label: 'HTML', body: htmlPanel(parsed.html) } : null,
    { name: 'text', label: 'Text', body: textPanel(parsed.text) },
    parsed.attachments.length ? {
      name: 'attachments', label: `Attachments (${parsed.attachments.length})`, body: table([
        { label: 'File', cell: (a) => a.filename, class: 'wrap-anywhere' },
        { label: 'Type', cell: (a) => h('code', {}, a.type) },
        { label: 'Size', cell: (a) => bytes(a.size) },
      ], parsed.attachments),
    } : null,
    {
      name: 'raw', label: 'Raw source', body: [
        h('div', { class: 'preview-bar' },
          h('span', {}, `The exact signed bytes that were (or will be) sent · ${bytes(size)}`,
            shown.length < parsed.source.length ? ` · showing the first ${bytes(sourceLimit)}` : '',
            tracked ? ' · the first recipient’s copy: opening its pixel or links, here or in a mail program, counts as theirs' : ''),
          download),
        h('pre', { class: 'source', id: 'raw-source' }, shown)],
    },
  ]);
}
