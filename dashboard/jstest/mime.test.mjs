// Tests of the dashboard's MIME reader (static/assets/mime.js), run by
// `node --test` from dashboard_test.go: the parts a user sees on a
// message's page must be the parts that were sent, to the last byte.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseMessage } from '../static/assets/mime.js';

const bytes = (s) => new TextEncoder().encode(s.replaceAll('\n', '\r\n')).buffer;
const b64 = (s) => Buffer.from(s, 'utf8').toString('base64');

test('base64 parts keep their last bytes, padded or not', () => {
  for (const text of ['Thanks for your order 1042', 'Your total is €42', 'ab', 'abc', 'abcd']) {
    for (const encoded of [b64(text), b64(text).replace(/=+$/, '')]) {
      const m = parseMessage(bytes(`Content-Type: text/plain; charset=utf-8\nContent-Transfer-Encoding: base64\n\n${encoded.match(/.{1,8}/g).join('\n')}\n`));
      assert.equal(m.text.replace(/\r?\n$/, ''), text, `${text} as ${encoded}`);
    }
  }
});

test('quoted-printable soft breaks and escapes', () => {
  const m = parseMessage(bytes('Content-Type: text/html; charset=utf-8\nContent-Transfer-Encoding: quoted-printable\n\n<p style=3D"x">Hello <=\nb>there</b> =E2=82=AC</p>\n'));
  assert.equal(m.html.trim(), '<p style="x">Hello <b>there</b> €</p>');
});

test('nested multipart: the first text and html, attachments listed with their sizes', () => {
  const raw = [
    'From: a@example.com',
    'Subject: Invoice',
    'Content-Type: multipart/mixed; boundary="outer"',
    '',
    '--outer',
    'Content-Type: multipart/alternative; boundary=inner',
    '',
    '--inner',
    'Content-Type: text/plain; charset="iso-8859-1"',
    'Content-Transfer-Encoding: quoted-printable',
    '',
    'Caf=E9',
    '--inner',
    'Content-Type: text/html; charset=utf-8',
    '',
    '<p>Café</p>',
    '--inner--',
    '--outer',
    'Content-Type: application/pdf; name="invoice.pdf"',
    'Content-Disposition: attachment; filename="invoice.pdf"',
    'Content-Transfer-Encoding: base64',
    '',
    Buffer.alloc(1000, 7).toString('base64'),
    '--outer--',
    '',
  ].join('\n');
  const m = parseMessage(bytes(raw));
  assert.equal(m.text, 'Café');
  assert.equal(m.html, '<p>Café</p>');
  assert.deepEqual(m.attachments, [{ filename: 'invoice.pdf', type: 'application/pdf', size: 1000 }]);
  assert.deepEqual(m.headers.slice(0, 2), [['From', 'a@example.com'], ['Subject', 'Invoice']]);
});

test('folded headers are unfolded; a message with no blank line is all headers', () => {
  const m = parseMessage(bytes('Subject: a\n  long one\nX-Other: b'));
  assert.deepEqual(m.headers, [['Subject', 'a long one'], ['X-Other', 'b']]);
  assert.equal(m.text, '');
});

test('a multipart whose boundary never closes still yields its parts', () => {
  const m = parseMessage(bytes('Content-Type: multipart/alternative; boundary=b\n\n--b\nContent-Type: text/plain\n\nhello\n'));
  assert.equal(m.text.trim(), 'hello');
});
