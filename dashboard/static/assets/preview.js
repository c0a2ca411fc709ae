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

// A tracking address of the service: /t/o/ (the open pixel) or /t/c/ (a
// click) and a token, at the end of an absolute URL under --public-url,
// whatever its host and path prefix.
const trackingAddress = /^[\x00-\x20]*https?:\/\/[^?#]*\/t\/([oc])\/[A-Za-z0-9_-]+$/i;

/**
 * untracked is a tracked copy's html as the sender wrote it, for the
 * preview: the raw bytes of a tracked message are its first recipient's
 * copy, whose pixel and links count as that recipient's open and clicks
 * (docs/api.md "Engagement tracking"), so looking at it in the dashboard
 * must not follow them. The pixel is taken out, and each click address is
 * put back to the link it stands for: links holds the message's tracked
 * links in document order, the order its copy's click addresses come in. A
 * click address with no link left to stand for loses its href.
 */
export function untracked(html, links) {
  const doc = new DOMParser().parseFromString(html, 'text/html');
  for (const img of doc.querySelectorAll('img[src]')) {
    if (trackingAddress.exec(img.getAttribute('src'))?.[1].toLowerCase() === 'o') img.remove();
  }
  let next = 0;
  for (const a of doc.querySelectorAll('a[href], area[href]')) {
    if (trackingAddress.exec(a.getAttribute('href'))?.[1].toLowerCase() !== 'c') continue;
    const link = links[next];
    next += 1;
    if (link) a.setAttribute('href', link.url);
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
 *     URL, and an image's source (src, srcset, background, poster, SVG
 *     href, CSS url()) only when it is an absolute http(s), data or cid URL,
 *     so that nothing in the mail addresses the dashboard;
 *   - unless remoteImages, also takes out http(s) images, counting them.
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
      if (link ? !linkSchemes.test(v) : !keepImage(v)) el.removeAttribute(attr);
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
