// Building the page without ever parsing HTML: every string becomes a text
// node or an attribute value, so a subject such as
// "<img src=x onerror=alert(1)>" shows as those characters and never as an
// element. Nothing in the dashboard assigns innerHTML.

/**
 * h builds an element. props: {class, text, on: {click: fn}, dataset, …attributes};
 * a property that is a boolean sets or omits the attribute; children are
 * nodes, strings (as text), arrays of them, or null/false (skipped).
 */
export function h(tag, props, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(props || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k === 'on') {
      for (const [type, fn] of Object.entries(v)) el.addEventListener(type, fn);
    } else if (k === 'text') {
      el.textContent = String(v);
    } else if (k === 'dataset') {
      Object.assign(el.dataset, v);
    } else if (k === 'value' || k === 'checked' || k === 'srcdoc') {
      el[k] = v;
    } else {
      el.setAttribute(k === 'className' ? 'class' : k, v === true ? '' : String(v));
    }
  }
  append(el, children);
  return el;
}

/** append adds children (nodes, strings, nested arrays) to el. */
export function append(el, children) {
  for (const c of children.flat(Infinity)) {
    if (c === null || c === undefined || c === false) continue;
    el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return el;
}

/** replace empties el and fills it with children. */
export function replace(el, ...children) {
  el.replaceChildren();
  return append(el, children);
}

let ids = 0;
/** uid makes an id for label/aria wiring. */
export function uid(prefix = 'f') {
  ids += 1;
  return `${prefix}-${ids}`;
}
