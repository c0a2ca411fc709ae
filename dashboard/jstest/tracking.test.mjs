// Tests of how the preview tells a Mailroom tracking address
// (static/assets/preview.js trackingKind), run by `node --test` from
// jstest_test.go: the preview never loads one, since that records an
// open or a click on whichever message its token names.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { trackingKind } from '../static/assets/preview.js';

test('the pixel and click addresses, under any host and path prefix', () => {
  assert.equal(trackingKind('https://mail.example.com/t/o/AbC-_1'), 'o');
  assert.equal(trackingKind('https://mail.example.com/t/c/AbC-_1'), 'c');
  assert.equal(trackingKind('https://example.com/mailroom/t/c/x?utm=1#top'), 'c');
  assert.equal(trackingKind('  HTTP://example.com/T/O/x'), 'o');
  assert.equal(trackingKind('https://example.com/t/o/'), 'o');
});

test('percent-encoded and decorated forms the router takes too', () => {
  assert.equal(trackingKind('https://h.example/t/%6f/TOKEN'), 'o');
  assert.equal(trackingKind('https://h.example/%74/o/TOKEN'), 'o');
  assert.equal(trackingKind('https://h.example/t/o/TOKEN?z'), 'o');
  assert.equal(trackingKind('https://h.example/t/c/TOKEN 1x'), 'c');
  assert.equal(trackingKind('https://h.example/t/o/%E0%A4%A'), 'o');
});

test('other addresses are not', () => {
  for (const u of ['https://shop.example/logo.png', 'https://shop.example/to/x', 'https://shop.example/t/x/y',
    'mailto:t/o/x@example.com', 'cid:logo@x', 'data:image/gif;base64,R0lG', 'not a url', '/t/o/relative']) {
    assert.equal(trackingKind(u), null, u);
  }
});
