// The frame that shows mail's html (a message's, or a template's
// rendering): sandboxed with no allow-scripts, so nothing in it can run,
// under a policy of its own on top of the dashboard's.

/**
 * previewDocument wraps a message's html for the sandboxed frame. The frame
 * has no allow-scripts, so nothing in the mail can run; its own policy
 * blocks remote images (tracking pixels) until the user asks for them, and
 * links open in a new tab without a referrer. Blocked remote references are
 * also taken out of the html, so the browser does not even try them.
 */
export function previewDocument(html, remoteImages) {
  const img = remoteImages ? 'img-src data: https: http:' : 'img-src data:';
  const body = remoteImages ? html : withoutRemote(html).html;
  return `<!doctype html><meta charset="utf-8"><meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; ${img}; font-src data:">`
    + `<meta name="referrer" content="no-referrer"><base target="_blank">${body}`;
}

const remoteURL = /^\s*(?:https?:)?\/\//i;
const cssRemote = /url\(\s*(['"]?)\s*(?:https?:)?\/\/[^)]*\)/gi;
const blankPixel = 'data:image/gif;base64,R0lGODlhAQABAAAAACH5BAEKAAEALAAAAAABAAEAAAICTAEAOw==';

/**
 * withoutRemote returns html with every remote image, background and
 * stylesheet reference replaced, and how many there were. DOMParser makes
 * an inert document: nothing in it loads or runs while it is rewritten.
 */
export function withoutRemote(html) {
  const doc = new DOMParser().parseFromString(html, 'text/html');
  let count = 0;
  for (const el of doc.querySelectorAll('[src], [srcset], [background], [poster]')) {
    for (const attr of ['src', 'srcset', 'background', 'poster']) {
      const v = el.getAttribute(attr);
      if (v === null || !(remoteURL.test(v) || (attr === 'srcset' && /(?:^|,)\s*(?:https?:)?\/\//i.test(v)))) continue;
      count += 1;
      if (attr === 'src' && el.tagName === 'IMG') el.setAttribute('src', blankPixel);
      else el.removeAttribute(attr);
    }
  }
  for (const el of doc.querySelectorAll('[style]')) {
    const v = el.getAttribute('style');
    const stripped = v.replace(cssRemote, () => { count += 1; return 'none'; });
    if (stripped !== v) el.setAttribute('style', stripped);
  }
  for (const el of doc.querySelectorAll('style')) {
    el.textContent = el.textContent.replace(cssRemote, () => { count += 1; return 'none'; });
  }
  for (const el of doc.querySelectorAll('link, meta[http-equiv]')) el.remove();
  return { html: `<!doctype html>${doc.documentElement.outerHTML}`, count };
}
