// The HTML and Text tabs of a message, sent or received: the mail's html
// in the sandboxed preview frame (preview.js), with remote images blocked
// until the user asks for them, and its text part.
import { h } from './dom.js';
import { previewDocument, withoutRemote } from './preview.js';

/**
 * htmlPanel is the body of a message's HTML tab: a bar that says what the
 * frame holds back, with a button that loads or blocks remote images when
 * the html has any, and the frame (#html-preview).
 */
export function htmlPanel(html) {
  let remote = false;
  const frame = h('iframe', {
    id: 'html-preview', class: 'preview', title: 'The message’s html, as a mail client shows it',
    sandbox: 'allow-popups allow-popups-to-escape-sandbox', referrerpolicy: 'no-referrer',
    srcdoc: previewDocument(html, false),
  });
  const hasRemote = withoutRemote(html).count > 0;
  const toggle = h('button', { type: 'button', class: 'btn btn-secondary btn-small', hidden: !hasRemote }, 'Load remote images');
  const blocked = 'Remote images are blocked so that opening this page tells no sender you looked.';
  const note = h('span', {}, hasRemote ? blocked : 'Scripts in mail never run here.');
  toggle.addEventListener('click', () => {
    remote = !remote;
    frame.srcdoc = previewDocument(html, remote);
    toggle.textContent = remote ? 'Block remote images' : 'Load remote images';
    note.textContent = remote ? 'Remote images are loaded: their senders can tell that this message was opened.' : blocked;
  });
  return [h('div', { class: 'preview-bar' }, note, toggle), frame];
}

/** textPanel is the body of a message's Text tab (#text-part). */
export function textPanel(text) {
  return text !== null
    ? h('pre', { class: 'text-part', id: 'text-part' }, text)
    : h('p', { class: 'muted', id: 'text-part' }, 'This message has no text part.');
}
