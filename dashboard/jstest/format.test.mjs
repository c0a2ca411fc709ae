// Tests of the dashboard's time wording (static/assets/format.js), run by
// `node --test` from jstest_test.go.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ago, due } from '../static/assets/format.js';

const now = Date.parse('2026-03-01T12:00:00Z');
const at = (seconds) => new Date(now + seconds * 1000).toISOString();

test('a scheduled time ahead reads as when it comes', () => {
  assert.equal(due(at(90), now), ago(at(90), now));
  assert.match(due(at(3600), now), /1 hour/);
});

test('a scheduled time that has passed is due now, never "ago"', () => {
  for (const s of [0, -5, -600, -86400 * 3]) {
    assert.equal(due(at(s), now), 'due now', `${s} s`);
  }
});

test('no time, or one that does not parse', () => {
  assert.equal(due(null, now), '—');
  assert.equal(due('soon', now), 'soon');
});
