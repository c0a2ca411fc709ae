// One sending domain (GET /v1/domains/{domain}): its state, the DNS
// records to publish with each one's state and what DNS held, a check on
// demand (POST …/verify), and deleting it.
import { h, replace } from '../dom.js';
import { api, enc } from '../api.js';
import { badge, button, confirm, copyButton, dl, dueTime, errorBox, pageHeader, time, toast } from '../ui.js';
import { when } from '../format.js';
import { healthList } from './domainhealth.js';

const purposes = {
  dkim: { label: 'DKIM', what: 'Publishes the key that signs this domain’s mail, so receivers can check the signature.' },
  spf: { label: 'SPF', what: 'Lets Mailroom’s servers send with the bounce address on this domain.' },
  return_path: { label: 'Return path', what: 'Brings bounces and complaints back to Mailroom, which suppresses those addresses.' },
  dmarc: { label: 'DMARC', what: 'Tells receivers what to do with mail that fails authentication.' },
  receiving: { label: 'Receiving MX', what: 'Brings mail for every address of this domain to Mailroom, which stores it and sends email.received. Needed to receive mail, not to send it.' },
};

export default async function render(ctx) {
  const name = ctx.params[0];
  ctx.setTitle(name);
  const path = `/v1/domains/${enc(name)}`;
  let domain = await api(path, { signal: ctx.signal });
  ctx.setTitle(domain.name);

  const summary = h('section', { class: 'card', 'aria-labelledby': 'domain-status-title' });
  const records = h('section', { class: 'card', id: 'records', 'aria-labelledby': 'records-title' });
  const health = h('section', { class: 'card', id: 'health', 'aria-labelledby': 'health-title' });
  const result = h('div', { id: 'verify-result', role: 'status' });

  const verify = button('Verify now', async () => {
    verify.textContent = 'Checking DNS…';
    replace(result);
    try {
      domain = await api(`${path}/verify`, { method: 'POST', signal: ctx.signal });
      draw();
      follow();
      replace(result, verifyOutcome(domain));
      toast(domain.status === 'verified' ? `${domain.name} is verified.` : `Checked ${domain.name}: see each record’s state.`);
    } catch (err) {
      if (err.name === 'AbortError') return;
      replace(result, errorBox(err));
    } finally {
      verify.textContent = 'Verify now';
      // Disabled while it ran, the button dropped the focus: give it back
      // once it is enabled again.
      setTimeout(() => { if (document.activeElement === document.body) verify.focus(); });
    }
  }, { kind: 'primary', id: 'verify-domain' });

  const deleteError = h('div', { class: 'config-danger-error' });
  const remove = button('Delete domain', async () => {
    replace(deleteError);
    const yes = await confirm(`Delete ${domain.name}?`,
      `Mail from addresses at ${domain.name} is refused from now on, and its DKIM key is destroyed: `
      + 'adding the domain again makes a new key, with new records to publish. Messages already sent keep their log.',
      'Delete domain');
    if (!yes) return;
    try {
      await api(path, { method: 'DELETE', signal: ctx.signal });
    } catch (err) {
      if (err.name === 'AbortError') return;
      replace(deleteError, errorBox(err));
      return;
    }
    toast(`Deleted ${domain.name}.`);
    ctx.navigate('/domains');
  }, { kind: 'danger', id: 'delete-domain' });

  replace(ctx.main,
    pageHeader(domain.name, {
      back: { href: '/domains', text: 'Domains' },
      lead: 'Publish the records below at your DNS provider, then verify: mail from this domain is accepted once the required ones are found.',
      actions: verify,
    }),
    result,
    summary,
    records,
    health,
    h('section', { class: 'card config-danger', 'aria-labelledby': 'delete-domain-title' },
      h('div', { class: 'config-danger-text' },
        h('h2', { id: 'delete-domain-title' }, 'Delete this domain'),
        h('p', { class: 'muted small' }, 'Sending from it stops at once, and its DKIM key is destroyed. You can remove its DNS records afterwards.'),
        deleteError),
      remove));

  function draw() {
    replace(summary, statusSummary(domain));
    replace(records, recordList(domain));
    replace(health, healthList(domain));
  }
  draw();

  // A domain that is being checked on a schedule is shown again after each
  // check, so that a page left open tells when DNS has caught up.
  let timer = 0;
  const follow = () => {
    clearTimeout(timer);
    if (!domain.nextCheckAt || ctx.signal.aborted) return;
    const wait = Math.min(Math.max(new Date(domain.nextCheckAt).getTime() - Date.now() + 5000, 15000), 30 * 60 * 1000);
    timer = setTimeout(async () => {
      try {
        if (!document.hidden) {
          const fresh = await api(path, { signal: ctx.signal });
          // Redrawn only when something changed, so a selection survives.
          if (JSON.stringify(fresh) !== JSON.stringify(domain)) {
            domain = fresh;
            draw();
          }
        }
      } catch {
        // The next try, or the user's own, will say what is wrong.
      }
      follow();
    }, wait);
  };
  follow();
  ctx.signal.addEventListener('abort', () => clearTimeout(timer));
}

/** statusSummary is the domain's state in words, and its times. */
function statusSummary(d) {
  const required = d.records.filter((r) => r.required);
  const found = required.filter((r) => r.status === 'verified').length;
  const words = {
    verified: 'Verified: mail from any address at this domain is accepted and signed with its DKIM key.',
    pending: `Waiting for DNS: ${found} of ${required.length} required records found. Sending from this domain is refused until all are.`,
    temporary_failure: 'A required record was found missing or wrong. Sending continues for now; fix the record below, '
      + 'or the domain fails 72 hours after the problem was first seen.',
    failed: 'Failed: the required records were not found in time, so sending from this domain is refused. '
      + 'Publish them and use Verify now; the domain is not checked automatically any more.',
  };
  // The --dev sandbox domain is verified from the start and never looked
  // up in DNS: no check was made or is planned (docs/api.md, Domains).
  const sandbox = d.status === 'verified' && !d.lastCheckedAt && !d.nextCheckAt;
  return [
    h('div', { class: 'section-head' },
      h('h2', { id: 'domain-status-title' }, 'Status'),
      badge(d.status)),
    h('p', { class: 'domain-status-text' }, words[d.status] || ''),
    dl([
      ['Added', time(d.createdAt)],
      ['Verified', d.verifiedAt ? time(d.verifiedAt) : h('span', { class: 'muted' }, 'Not yet')],
      ['Last checked', d.lastCheckedAt ? time(d.lastCheckedAt)
        : h('span', { class: 'muted' }, sandbox ? 'Sandbox domain: not checked in DNS' : 'Not yet')],
      ['Next check', d.nextCheckAt ? dueTime(d.nextCheckAt)
        : h('span', { class: 'muted' }, d.status === 'failed' ? 'Only when you verify' : sandbox ? 'Never' : 'None scheduled')],
      // The operator assigns it: mailroom domains update --ip-pool.
      ['IP pool', d.ipPool ? h('code', { id: 'ip-pool' }, d.ipPool) : h('span', { class: 'muted', id: 'ip-pool' }, 'Default')],
      // PATCH /v1/domains/{domain} {tls} or mailroom domains update --tls.
      ['TLS', h('span', { id: 'domain-tls', dataset: { tls: d.tls } },
        d.tls === 'enforced' ? 'Enforced: every delivery needs verified TLS' : 'Opportunistic: TLS when the receiver offers it')],
      // PATCH /v1/domains/{domain} {receiving}.
      ['Receiving', d.receiving
        ? h('span', { id: 'domain-receiving' }, 'On: mail for any address arrives once the receiving MX is verified')
        : h('span', { class: 'muted', id: 'domain-receiving' }, 'Off')],
      // PATCH /v1/domains/{domain} {openTracking, clickTracking} or
      // mailroom domains update --open-tracking/--click-tracking
      // (docs/api.md "Engagement tracking"); a send may override either.
      ['Open tracking', d.openTracking
        ? h('span', { id: 'domain-open-tracking' }, 'On: a 1×1 image at the end of each html part counts opens')
        : h('span', { class: 'muted', id: 'domain-open-tracking' }, 'Off')],
      ['Click tracking', d.clickTracking
        ? h('span', { id: 'domain-click-tracking' }, 'On: the html part’s links go through this service to count clicks')
        : h('span', { class: 'muted', id: 'domain-click-tracking' }, 'Off')],
    ]),
  ];
}

/** verifyOutcome says what a check on demand found. */
function verifyOutcome(d) {
  const required = d.records.filter((r) => r.required);
  const missing = required.filter((r) => r.status !== 'verified');
  const count = missing.length === required.length
    ? `None of the ${required.length} required records was found yet. `
    : `${missing.length} of the ${required.length} required records ${missing.length === 1 ? 'was' : 'were'} not found yet. `;
  if (!missing.length) {
    return h('div', { class: 'alert alert-info' },
      h('p', {}, h('strong', {}, 'Every required record was found. '), `Checked ${when(d.lastCheckedAt)}.`));
  }
  return h('div', { class: 'alert alert-warn' },
    h('p', {}, h('strong', {}, count),
      'New records can take a while to show; each record below says what was seen.'),
    h('p', { class: 'small' }, `Checked ${when(d.lastCheckedAt)}.`));
}

function recordList(d) {
  return [
    h('div', { class: 'section-head' }, h('h2', { id: 'records-title' }, 'DNS records')),
    h('p', { class: 'muted small records-note' },
      'Add these at your DNS provider (some want the name without the trailing .', d.name,
      '). DNS changes usually show within minutes but can take up to 48 hours; pending domains are checked again automatically.'),
    h('ul', { class: 'records' }, d.records.map((r) => recordItem(r, d.status))),
  ];
}

/**
 * recordState is how a record's state reads: while the domain is pending, a
 * record DNS does not hold yet is "not found yet", not an alarming failure.
 */
function recordState(r, domainStatus) {
  if (r.status === 'failed' && domainStatus === 'pending') return h('span', { class: 'badge badge-warn' }, 'not found yet');
  return badge(r.status);
}

/**
 * dkimRoles tell a domain's DKIM records apart (docs/api.md, Domains): the
 * key that signs (required), the next key of a rotation (signing moves to
 * it once its record is found), the Ed25519 key (signs beside RSA once
 * found), and a key signing moved away from, whose record may be deleted
 * after removableAfter.
 */
const dkimRoles = {
  next: { label: 'DKIM, next key', need: 'Key rotation', what: 'The new key of a rotation. Publish it, then verify: signing moves to it once it is found, and the current record may go 7 days later.' },
  ed25519: { label: 'DKIM, Ed25519', need: 'Optional', what: 'A second signature with Ed25519 (RFC 8463), beside the RSA one, once this record is found.' },
  old: { label: 'DKIM, old key', need: 'Removable', what: 'This key no longer signs. Keep the record until the date below for mail still on its way, then delete it.' },
};

function dkimRole(r) {
  if (r.purpose !== 'dkim' || r.required) return '';
  if (r.removableAfter) return 'old';
  if (/\bk=ed25519\b/.test(r.value)) return 'ed25519';
  return 'next';
}

function recordItem(r, domainStatus) {
  const roleName = dkimRole(r);
  const role = dkimRoles[roleName];
  const p = role || purposes[r.purpose] || { label: r.purpose, what: '' };
  const expected = r.type === 'MX' && r.priority !== undefined ? `${r.priority} ${r.value}` : r.value;
  const showFound = Array.isArray(r.found) && r.found.length > 0
    && (r.status !== 'verified' || !r.found.some((f) => same(f, expected)));
  const shownState = r.status === 'failed' && domainStatus === 'pending' ? 'pending' : r.status;
  return h('li', { class: `record record-${shownState}`, dataset: roleName ? { purpose: r.purpose, role: roleName } : { purpose: r.purpose } },
    h('div', { class: 'record-head' },
      h('div', { class: 'record-title' },
        h('h3', {}, p.label),
        h('span', { class: r.required ? 'record-need record-required' : 'record-need' },
          r.required ? (r.purpose === 'receiving' ? 'Required to receive' : 'Required') : role ? role.need : 'Recommended')),
      recordState(r, domainStatus)),
    p.what ? h('p', { class: 'record-what small muted' }, p.what) : null,
    h('dl', { class: 'record-fields' },
      h('div', {}, h('dt', {}, 'Type'), h('dd', {}, h('code', { class: 'record-type' }, r.type))),
      h('div', {}, h('dt', {}, 'Name'), h('dd', {}, copyable(r.name, `${p.label} record’s name`, 'record-name'))),
      h('div', {}, h('dt', {}, 'Value'), h('dd', {}, copyable(r.value, `${p.label} record’s value`, 'record-data'))),
      r.priority !== undefined && r.priority !== null
        ? h('div', {}, h('dt', {}, 'Priority'), h('dd', {}, h('code', {}, String(r.priority)))) : null,
      r.removableAfter
        ? h('div', { class: 'record-removable' }, h('dt', {}, 'Removable after'), h('dd', {}, time(r.removableAfter))) : null,
      showFound ? h('div', { class: 'record-found' }, h('dt', {}, 'DNS has'),
        h('dd', {}, r.found.map((f) => h('code', { class: 'found-value' }, f)))) : null),
    r.problem ? h('p', { class: r.status === 'verified' ? 'record-note small muted' : 'record-problem small' }, r.problem) : null);
}

function copyable(text, what, cls) {
  return h('div', { class: `record-value ${cls}` }, h('code', {}, text), copyButton(text, what));
}

/** same compares DNS text loosely: case, spaces, and a final dot. */
function same(a, b) {
  const norm = (s) => String(s).toLowerCase().replace(/\s+/g, ' ').replace(/\s*;\s*/g, ';').replace(/[.;\s]+$/, '').trim();
  return norm(a) === norm(b);
}
