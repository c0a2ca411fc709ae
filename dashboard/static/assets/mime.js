// Reading a stored message (GET /v1/messages/{id}/raw) the way a mail client
// does, to show its html and text parts: RFC 5322 header fields (unfolded,
// §2.2.3), RFC 2045 Content-Type and Content-Transfer-Encoding (base64 and
// quoted-printable, §6.7–6.8), RFC 2046 multipart bodies (§5.1.1) and the
// part's charset, decoded by the browser's TextDecoder. Work is bounded by
// the message's size: parts nest at most 20 deep.

const maxDepth = 20;

/** bytesToBinary turns bytes into a string with one char per byte. */
function bytesToBinary(bytes) {
  let out = '';
  for (let i = 0; i < bytes.length; i += 0x8000) {
    out += String.fromCharCode.apply(null, bytes.subarray(i, i + 0x8000));
  }
  return out;
}

function binaryToBytes(s) {
  const b = new Uint8Array(s.length);
  for (let i = 0; i < s.length; i += 1) b[i] = s.charCodeAt(i) & 0xff;
  return b;
}

/** splitEntity separates header fields from the body at the first empty line. */
function splitEntity(s) {
  const m = /\r?\n\r?\n/.exec(s);
  if (!m) return { head: s, body: '' };
  return { head: s.slice(0, m.index), body: s.slice(m.index + m[0].length) };
}

/** parseHeaders unfolds and splits header fields: [[name, value], …]. */
export function parseHeaders(head) {
  const out = [];
  for (const line of head.split(/\r?\n/)) {
    if (/^[ \t]/.test(line) && out.length) {
      out[out.length - 1][1] += ` ${line.trim()}`;
      continue;
    }
    const i = line.indexOf(':');
    if (i > 0) out.push([line.slice(0, i).trim(), line.slice(i + 1).trim()]);
  }
  return out;
}

function header(headers, name) {
  const h = headers.find(([k]) => k.toLowerCase() === name);
  return h ? h[1] : '';
}

/** parseParams reads "type/sub; a=b; c=\"d\"" (RFC 2045 §5.1). */
export function parseParams(value) {
  const [first, ...rest] = value.split(';');
  const params = {};
  const re = /;\s*([^=\s;]+)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^;\s]*))/g;
  let m;
  const tail = `;${rest.join(';')}`;
  while ((m = re.exec(tail))) params[m[1].toLowerCase()] = m[2] !== undefined ? m[2].replace(/\\(.)/g, '$1') : m[3];
  return { value: first.trim().toLowerCase(), params };
}

function decodeTransfer(body, encoding) {
  switch (encoding) {
    case 'base64': {
      // Whitespace and stray characters out, then the padding restored
      // (RFC 2045 §6.8): the last group may lack its "=".
      let clean = body.replace(/[^A-Za-z0-9+/]/g, '');
      if (clean.length % 4 === 1) clean = clean.slice(0, -1); // not a whole byte
      clean += '='.repeat((4 - (clean.length % 4)) % 4);
      try {
        return atob(clean);
      } catch {
        return body;
      }
    }
    case 'quoted-printable':
      return body.replace(/=\r?\n/g, '').replace(/=([0-9A-Fa-f]{2})/g, (_, hx) => String.fromCharCode(parseInt(hx, 16)));
    default:
      return body;
  }
}

function decodeCharset(binary, charset) {
  const bytes = binaryToBytes(binary);
  try {
    return new TextDecoder(charset || 'utf-8').decode(bytes);
  } catch {
    return new TextDecoder('utf-8').decode(bytes);
  }
}

/**
 * parseMessage reads raw bytes (ArrayBuffer) and returns {headers, html,
 * text, attachments: [{filename, type, size}], source}: source is the whole
 * message as UTF-8 text, for showing.
 */
export function parseMessage(buffer) {
  const bytes = new Uint8Array(buffer);
  const binary = bytesToBinary(bytes);
  const out = { headers: [], html: null, text: null, attachments: [], source: new TextDecoder('utf-8').decode(bytes) };
  walk(binary, out, 0, true);
  return out;
}

function walk(entity, out, depth, top) {
  const { head, body } = splitEntity(entity);
  const headers = parseHeaders(head);
  if (top) out.headers = headers;
  const ct = parseParams(header(headers, 'content-type') || 'text/plain; charset=us-ascii');
  const disposition = parseParams(header(headers, 'content-disposition') || 'inline');
  if (ct.value.startsWith('multipart/') && ct.params.boundary && depth < maxDepth) {
    for (const part of splitMultipart(body, ct.params.boundary)) walk(part, out, depth + 1, false);
    return;
  }
  const encoding = header(headers, 'content-transfer-encoding').toLowerCase();
  const filename = disposition.params.filename || ct.params.name;
  const isAttachment = disposition.value === 'attachment' || (filename && !ct.value.startsWith('text/'));
  if (!isAttachment && ct.value === 'text/html' && out.html === null) {
    out.html = decodeCharset(decodeTransfer(body, encoding), ct.params.charset);
  } else if (!isAttachment && ct.value === 'text/plain' && out.text === null) {
    out.text = decodeCharset(decodeTransfer(body, encoding), ct.params.charset);
  } else if (!ct.value.startsWith('multipart/')) {
    out.attachments.push({ filename: filename || '(unnamed)', type: ct.value, size: decodeTransfer(body, encoding).length });
  }
}

/** splitMultipart cuts a multipart body at its boundary lines (RFC 2046 §5.1.1). */
function splitMultipart(body, boundary) {
  const parts = [];
  const delim = `--${boundary}`;
  const lines = body.split(/(?<=\n)/);
  let current = null;
  for (const line of lines) {
    const bare = line.replace(/[ \t]*\r?\n$/, '');
    if (bare === delim || bare === `${delim}--`) {
      if (current !== null) parts.push(current.replace(/\r?\n$/, ''));
      if (bare.endsWith('--') && bare !== delim) return parts;
      current = '';
      continue;
    }
    if (current !== null) current += line;
  }
  if (current) parts.push(current);
  return parts;
}
