// The verdicts of a received message's checks (RFC 8601 result words), in
// their colours, with the words too.
import { h } from '../dom.js';

const tones = {
  pass: 'good', fail: 'bad', softfail: 'warn', neutral: 'muted', none: 'muted', temperror: 'warn', permerror: 'bad',
};

/** verdictBadge shows "SPF pass" and the like. */
export function verdictBadge(check, result) {
  return h('span', { class: `badge badge-${tones[result] || 'muted'}`, dataset: { check: check.toLowerCase(), result } }, `${check} ${result}`);
}
