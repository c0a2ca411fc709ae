// A sending domain's health checks (docs/api.md "Domain health"): each
// check's verdict and, unless it passed, what to fix, as the last
// verification or re-check found them. They are advice: the domain's
// status does not depend on them.
import { h } from '../dom.js';

const checks = {
  dmarc: { label: 'DMARC policy', what: 'Gmail and Yahoo require a DMARC record of bulk senders; it tells receivers what to do with mail that forges your domain.' },
  spf_covers_sending_addresses: { label: 'SPF covers the sending addresses', what: 'Every address Mailroom sends this domain’s mail from must pass SPF.' },
  fcrdns: { label: 'Reverse DNS of the sending addresses', what: 'Receivers refuse mail from addresses whose PTR name does not resolve back to them. The operator sets these.' },
  return_path_mx: { label: 'Bounces come back', what: 'The bounce subdomain’s MX must point at Mailroom, which suppresses bounced addresses.' },
  mta_sts: { label: 'MTA-STS', what: 'Advice: makes servers sending to this domain require TLS.' },
  tls_rpt: { label: 'TLS reporting', what: 'Advice: servers sending to this domain report TLS failures to you.' },
  dnsbl: { label: 'Blocklists', what: 'Whether a sending address is listed on the blocklists the operator watches.' },
};

const tones = { pass: 'good', warn: 'warn', fail: 'bad' };

/** healthList is the checks section of a domain's page. */
export function healthList(d) {
  const list = Array.isArray(d.checks) ? d.checks : [];
  return [
    h('div', { class: 'section-head' }, h('h2', { id: 'health-title' }, 'Health checks')),
    h('p', { class: 'muted small records-note' },
      'What else stands between this domain’s mail and the inbox, as the last check found it. '
      + 'These are advice: the domain’s status does not depend on them.'),
    list.length
      ? h('ul', { class: 'records health-checks' }, list.map(checkItem))
      : h('p', { class: 'empty', id: 'health-empty' }, 'Not checked yet: verify the domain to run the checks.'),
  ];
}

function checkItem(c) {
  const p = checks[c.name] || { label: c.name, what: '' };
  const tone = tones[c.status] || 'muted';
  return h('li', { class: `record health-check health-${c.status}`, dataset: { check: c.name, status: c.status } },
    h('div', { class: 'record-head' },
      h('div', { class: 'record-title' }, h('h3', {}, p.label), h('code', { class: 'small muted' }, c.name)),
      h('span', { class: `badge badge-${tone}` }, c.status)),
    p.what ? h('p', { class: 'record-what small muted' }, p.what) : null,
    c.detail ? h('p', { class: c.status === 'pass' ? 'record-note small muted' : 'record-problem small health-detail' }, c.detail) : null);
}
