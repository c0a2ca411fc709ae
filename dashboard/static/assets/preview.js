// The frame that shows mail's html (a message's, or a template's
// rendering): sandboxed with no allow-scripts, so nothing in it can run,
// under a policy of its own on top of the dashboard's.

/**
 * previewDocument wraps a message's html for the sandboxed frame. The frame
 * has no allow-scripts, so nothing in the mail can run; its own policy
 * blocks remote images (tracking pixels) until the user asks for them, and
 * links open in a new tab without a referrer. The html is rewritten first
 * (see cleaned): what would load anything but an image is taken out, and
 * so is every reference that is not an absolute URL.
 */
export function previewDocument(html, remoteImages) {
  const img = remoteImages ? 'img-src data: https: http:' : 'img-src data:';
  return `<!doctype html><meta charset="utf-8"><meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; ${img}; font-src data:">`
    + `<meta name="referrer" content="no-referrer"><base target="_blank">${cleaned(html, remoteImages).html}`;
}

/**
 * trackingKind says whether url is a tracking address of a Mailroom
 * service (docs/api.md "Engagement tracking"), 'o' for an open pixel, 'c'
 * for a click, null otherwise: its path, percent-decoded (the service's
 * router decodes it too), holds /t/o/ or /t/c/, whatever its host, path
 * prefix, query or fragment. Following one records an open or a click on
 * whichever message its token names, so the preview never loads one: a
 * third party's image under such a path is taken out with them.
 */
export function trackingKind(url) {
  let u;
  try {
    u = new URL(String(url).trim());
  } catch {
    return null;
  }
  if (u.protocol !== 'https:' && u.protocol !== 'http:') return null;
  let path = u.pathname;
  try {
    path = decodeURIComponent(path);
  } catch {
    // A malformed escape: the raw path is what is left to read.
  }
  const m = /\/t\/([oc])(?:\/|$)/i.exec(path);
  return m ? m[1].toLowerCase() : null;
}

/**
 * untracked is a tracked copy's html as the sender wrote it, for the
 * preview: the raw bytes of a tracked message are its first recipient's
 * copy, whose pixel and links count as that recipient's open and clicks
 * (docs/api.md "Engagement tracking"), so looking at it in the dashboard
 * must not follow them. Every tracking image is taken out (previewDocument
 * takes out any that is left, wherever it stands), and each click address
 * is put back to the link it stands for: links holds the message's
 * tracked links in document order, the order its copy's click addresses
 * come in. When the click addresses are not as many as the links (the
 * sender's html held tracking addresses of its own), none can be told
 * from another, and every one loses its href.
 */
export function untracked(html, links) {
  const doc = new DOMParser().parseFromString(html, 'text/html');
  for (const img of doc.querySelectorAll('img[src]')) {
    if (trackingKind(img.getAttribute('src'))) img.remove();
  }
  const anchors = [...doc.querySelectorAll('a[href], area[href]')]
    .map((a) => ({ a, kind: trackingKind(a.getAttribute('href')) }))
    .filter(({ kind }) => kind);
  const clicks = anchors.filter(({ kind }) => kind === 'c');
  const mapped = clicks.length === links.length;
  let next = 0;
  for (const { a, kind } of anchors) {
    if (mapped && kind === 'c') a.setAttribute('href', links[next++].url);
    else a.removeAttribute('href');
  }
  return `<!doctype html>${doc.documentElement.outerHTML}`;
}

/** withoutRemote is html with every remote image taken out, and how many there were. */
export function withoutRemote(html) {
  return cleaned(html, false);
}

// Only a URL with one of these schemes is kept. Anything else that is not
// absolute ("/api-keys", "logo.png", "//host/x", "#top") would resolve
// against the dashboard: a srcdoc frame's base is its parent's address,
// and the dashboard's policy (base-uri 'none') forbids a <base href> that
// could say otherwise. An http(s) URL needs its "//" ("https:/x" is
// relative to a page on https), and only what the URL parser strips may
// come before the scheme (C0 controls and space: not \s, which has more).
const remoteURL = /^[\x00-\x20]*https?:\/\//i;
const linkSchemes = /^[\x00-\x20]*(?:https?:\/\/|mailto:|tel:)/i;
const imageSchemes = /^[\x00-\x20]*(?:https?:\/\/|data:|cid:)/i;
const cssURL = /url\(\s*(['"]?)([^'")]*)\1\s*\)/gi;
const blankPixel = 'data:image/gif;base64,R0lGODlhAQABAAAAACH5BAEKAAEALAAAAAABAAEAAAICTAEAOw==';

// Elements that load, navigate, or change how the frame treats what is in
// it, and are never an image: a mail client shows none of them.
const dropped = 'script, noscript, link, meta, base, iframe, frame, frameset, object, embed, applet, portal, audio, video, track';
// Attributes that make a request without showing anything, and a link's
// target (every link opens in a new tab, as <base target> says).
const droppedAttrs = ['target', 'ping', 'action', 'formaction', 'manifest', 'codebase', 'archive', 'longdesc', 'lowsrc', 'dynsrc', 'cite'];

/**
 * cleaned rewrites a mail's html for the preview, through DOMParser, which
 * makes an inert document: nothing in it loads or runs while it is
 * rewritten. It
 *   - removes what is not an image but would load or navigate: link
 *     (stylesheets, prefetch, preconnect), meta (refresh, referrer), base,
 *     frames, objects, media, scripts, and attributes such as ping;
 *   - keeps a link's href only when it is an absolute http(s), mailto or tel
 *     URL and no tracking address, and an image's source (src, srcset, background, poster, SVG
 *     href, CSS url()) only when it is an absolute http(s), data or cid URL,
 *     so that nothing in the mail addresses the dashboard;
 *   - unless remoteImages, also takes out http(s) images, counting them;
 *   - takes out every image at a Mailroom tracking address (trackingKind),
 *     remote images or not.
 * It returns {html, count}: count is the number of remote images, whether
 * they were taken out or not.
 */
function cleaned(html, remoteImages) {
  const doc = new DOMParser().parseFromString(html, 'text/html');
  let count = 0;
  for (const el of doc.querySelectorAll(dropped)) el.remove();
  for (const el of doc.querySelectorAll(droppedAttrs.map((a) => `[${a}]`).join(', '))) {
    for (const a of droppedAttrs) el.removeAttribute(a);
  }

  // An image's source: kept if absolute and, when remote, allowed.
  const keepImage = (v) => {
    // A Mailroom tracking address is never loaded, remote images or not:
    // it would record an open or a click (see trackingKind).
    if (trackingKind(v)) return false;
    if (!imageSchemes.test(v)) return false;
    if (!remoteURL.test(v)) return true;
    count += 1;
    return remoteImages;
  };
  for (const el of doc.querySelectorAll('[src], [srcset], [background], [poster]')) {
    for (const attr of ['src', 'srcset', 'background', 'poster']) {
      const v = el.getAttribute(attr);
      if (v === null) continue;
      const ok = attr === 'srcset'
        ? v.split(',').map((c) => c.trim()).filter(Boolean).map(keepImage).every(Boolean)
        : keepImage(v);
      if (ok) continue;
      if (attr === 'src' && el.tagName === 'IMG') el.setAttribute('src', blankPixel);
      else el.removeAttribute(attr);
    }
  }
  // Links (a, area, and SVG's a) and SVG's image, use and feImage, which
  // load what their href names.
  for (const el of doc.querySelectorAll('[href], [xlink\\:href]')) {
    const link = el.localName === 'a' || el.localName === 'area';
    for (const attr of ['href', 'xlink:href']) {
      const v = el.getAttribute(attr);
      if (v === null) continue;
      // A link to a tracking address would record a click when followed
      // from the preview: it keeps its text and loses its href.
      if (link ? !linkSchemes.test(v) || trackingKind(v) : !keepImage(v)) el.removeAttribute(attr);
    }
  }
  const css = (text) => text.replace(cssURL, (all, _q, url) => (keepImage(url) ? all : 'none'));
  for (const el of doc.querySelectorAll('[style]')) {
    const v = el.getAttribute('style');
    const rewritten = css(v);
    if (rewritten !== v) el.setAttribute('style', rewritten);
  }
  for (const el of doc.querySelectorAll('style')) {
    el.textContent = css(el.textContent.replace(/@import[^;]*;?/gi, ''));
  }
  return { html: `<!doctype html>${doc.documentElement.outerHTML}`, count };
}
