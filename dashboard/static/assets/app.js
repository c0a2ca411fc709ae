// The dashboard's shell: sign-in, the navigation the key's scopes allow, and
// a router over the History API that loads each page's module on demand.
import { h, replace } from './dom.js';
import { api, ApiError, hooks } from './api.js';
import { session } from './session.js';
import { errorBox } from './ui.js';

/** The pages, in the order of the navigation, with the scope each needs. */
const sections = [
  { href: '/messages', label: 'Email log', scope: 'send' },
  { href: '/domains', label: 'Domains', scope: 'domains' },
  { href: '/templates', label: 'Templates', scope: 'templates' },
  { href: '/webhooks', label: 'Webhooks', scope: 'webhooks' },
  { href: '/received', label: 'Received', scope: 'receive' },
  { href: '/suppressions', label: 'Suppressions', scope: 'send' },
  { href: '/api-keys', label: 'API keys', scope: 'keys' },
  { href: '/audit-log', label: 'Audit log', scope: 'keys' },
];

const routes = [
  { path: /^\/messages$/, module: './pages/messages.js', scope: 'send' },
  { path: /^\/messages\/([^/]+)$/, module: './pages/message.js', scope: 'send' },
  { path: /^\/domains$/, module: './pages/domains.js', scope: 'domains' },
  { path: /^\/domains\/([^/]+)$/, module: './pages/domain.js', scope: 'domains' },
  { path: /^\/templates$/, module: './pages/templates.js', scope: 'templates' },
  { path: /^\/templates\/([^/]+)$/, module: './pages/template.js', scope: 'templates' },
  { path: /^\/webhooks$/, module: './pages/webhooks.js', scope: 'webhooks' },
  { path: /^\/webhooks\/([^/]+)$/, module: './pages/webhook.js', scope: 'webhooks' },
  { path: /^\/received$/, module: './pages/received.js', scope: 'receive' },
  { path: /^\/received\/([^/]+)$/, module: './pages/receivedmessage.js', scope: 'receive' },
  { path: /^\/suppressions$/, module: './pages/suppressions.js', scope: 'send' },
  { path: /^\/api-keys$/, module: './pages/apikeys.js', scope: 'keys' },
  { path: /^\/audit-log$/, module: './pages/auditlog.js', scope: 'keys' },
];

const app = document.getElementById('app');
let main = document.getElementById('main');
let current = null; // the AbortController of the page on screen

/** navigate shows path, adding it to the history unless replace is set. */
export function navigate(path, { replace: rep = false } = {}) {
  if (rep) history.replaceState(null, '', path);
  else history.pushState(null, '', path);
  render({ focus: true });
}

/** landing is the first page the key may see: the log, or the first allowed. */
function landing() {
  const s = sections.find((x) => session.can(x.scope));
  return s ? s.href : null;
}

async function render({ focus = false } = {}) {
  current?.abort();
  const controller = new AbortController();
  current = controller;
  if (!session.current) {
    showSignIn();
    return;
  }
  let path = location.pathname.replace(/\/+$/, '') || '/';
  if (path === '/') {
    const to = landing();
    if (to) {
      history.replaceState(null, '', to + location.search);
      path = to;
    }
  }
  showShell(path);
  main.setAttribute('aria-busy', 'true');
  const route = routes.find((r) => r.path.test(path));
  try {
    if (!route) {
      page('Page not found', 'There is no page at this address.');
    } else if (!session.can(route.scope)) {
      page('Not allowed', `This key lacks the “${route.scope}” scope that this page needs. Sign in with a key that holds it.`);
    } else {
      const params = path.match(route.path).slice(1).map(decodeURIComponent);
      const mod = await import(route.module);
      await mod.default({
        main, params, query: new URLSearchParams(location.search), signal: controller.signal, navigate,
        setTitle: (t) => { document.title = `${t} · Mailroom`; },
      });
    }
  } catch (err) {
    if (controller.signal.aborted || err.name === 'AbortError') return;
    failedPage(err, route ? sections.find((x) => path.startsWith(x.href)) : null);
  }
  if (controller.signal.aborted) return;
  main.setAttribute('aria-busy', 'false');
  // Focus moves to the new page's heading, so that a screen reader
  // announces it and Tab continues from there (WCAG 2.4.3).
  if (focus) {
    const heading = main.querySelector('h1');
    if (heading && !heading.hasAttribute('tabindex')) heading.tabIndex = -1;
    (heading || main).focus();
  }
}

/**
 * failedPage explains a page that could not be shown: what is not there
 * (404), or that the service is away or busy, with a way to try again.
 */
function failedPage(err, section) {
  const back = section ? h('p', {}, h('a', { href: section.href }, `← ${section.label}`)) : null;
  if (err.status === 404) {
    document.title = 'Not found · Mailroom';
    replace(main, h('header', { class: 'page-header' }, h('h1', { tabindex: '-1' }, 'Not found')),
      h('p', {}, err.message), back);
    return;
  }
  // A module that did not load is a service that did not answer.
  const away = !(err instanceof ApiError);
  const title = err.status === 429 ? 'Too many requests' : away || err.status === 503 ? 'Mailroom is not answering' : 'Something went wrong';
  document.title = `${title} · Mailroom`;
  replace(main, h('header', { class: 'page-header' }, h('h1', { tabindex: '-1' }, title)),
    away ? h('div', { class: 'alert alert-error', role: 'alert' }, h('p', {}, 'The service could not be reached. Check that it is running, then try again.')) : errorBox(err),
    h('div', { class: 'actions' },
      h('button', { type: 'button', class: 'btn btn-primary', on: { click: () => render({ focus: true }) } }, 'Try again'),
      back));
}

function page(title, text) {
  document.title = `${title} · Mailroom`;
  replace(main, h('header', { class: 'page-header' }, h('h1', { tabindex: '-1' }, title)), h('p', {}, text));
}

/** showShell draws the header and navigation once per sign-in. */
function showShell(path) {
  let shell = document.getElementById('shell');
  if (!shell) {
    const k = session.current;
    main = h('main', { id: 'main', tabindex: '-1', 'aria-busy': 'true' });
    shell = h('div', { id: 'shell', class: 'shell' },
      h('header', { class: 'topbar' },
        h('a', { class: 'brand', href: landing() || '/' }, h('img', { src: '/assets/icon.svg', alt: '', width: '28', height: '28' }), 'Mailroom'),
        h('nav', { 'aria-label': 'Main', class: 'mainnav' },
          h('ul', {}, sections.filter((s) => session.can(s.scope)).map((s) =>
            h('li', {}, h('a', { href: s.href, dataset: { section: s.href } }, s.label))))),
        h('div', { class: 'who' },
          h('span', { class: 'who-key', title: `Key ${k.keyId}, scopes: ${k.scopes.join(', ')}` },
            h('span', { 'aria-hidden': 'true' }, 'Key: '), h('span', { class: 'visually-hidden' }, 'Signed in with the key '), k.name || k.keyId),
          h('button', { type: 'button', id: 'sign-out', class: 'btn btn-ghost btn-small', on: { click: signOut } }, 'Sign out'))),
      main);
    replace(app, shell);
    // The header stays at the top of the window (position: sticky), so
    // what focus or a link scrolls into view is kept below it (WCAG 2.2,
    // 2.4.11 Focus Not Obscured); it wraps onto more lines when narrow.
    const header = shell.querySelector('.topbar');
    new ResizeObserver(() => {
      document.documentElement.style.scrollPaddingTop = `${header.offsetHeight + 8}px`;
    }).observe(header);
  }
  for (const a of shell.querySelectorAll('.mainnav a')) {
    const on = path === a.dataset.section || path.startsWith(`${a.dataset.section}/`);
    if (on) a.setAttribute('aria-current', 'page');
    else a.removeAttribute('aria-current');
  }
}

function signOut() {
  session.signOut();
  history.pushState(null, '', '/');
  render({ focus: true });
}

/** showSignIn asks for a key; a wrong one is refused with the service's words. */
function showSignIn() {
  document.title = 'Sign in · Mailroom';
  // The input has no name, and the form posts: even a submission that
  // bypasses the script (form.submit()) can never put the key in an address.
  const input = h('input', {
    id: 'api-key', type: 'password', autocomplete: 'off', spellcheck: 'false',
    autocapitalize: 'off', required: true, placeholder: 'mailroom_…', 'aria-describedby': 'api-key-hint',
  });
  const errorEl = h('p', { id: 'sign-in-error', class: 'form-error', role: 'alert' }, session.endedBecause);
  const submit = h('button', { type: 'submit', class: 'btn btn-primary btn-block' }, 'Sign in');
  const form = h('form', { id: 'sign-in', class: 'card signin-card', method: 'post', novalidate: true },
    h('div', { class: 'signin-brand' }, h('img', { src: '/assets/icon.svg', alt: '', width: '40', height: '40' }), h('span', {}, 'Mailroom')),
    h('h1', { tabindex: '-1' }, 'Sign in'),
    h('div', { class: 'field' },
      h('label', { for: 'api-key' }, 'API key'),
      input,
      h('span', { class: 'hint', id: 'api-key-hint' },
        'Paste a key such as the one ', h('code', {}, 'mailroom serve --dev'), ' prints, or one from ',
        h('code', {}, 'mailroom keys create'), '. It stays in this tab only and is forgotten when you sign out or close it.')),
    errorEl,
    submit);
  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    const key = input.value.trim();
    errorEl.textContent = '';
    if (!key) {
      errorEl.textContent = 'Paste an API key to sign in.';
      input.focus();
      return;
    }
    submit.disabled = true;
    submit.textContent = 'Signing in…';
    try {
      const current = await api('/v1/api-keys/current', { key });
      session.signIn(key, current);
      input.value = '';
      render({ focus: true });
    } catch (err) {
      errorEl.textContent = err.status === 401
        ? `${err.message} Check that you pasted the whole key.`
        : err.message;
      input.setAttribute('aria-invalid', 'true');
      input.focus();
    } finally {
      submit.disabled = false;
      submit.textContent = 'Sign in';
    }
  });
  main = h('main', { id: 'main', tabindex: '-1', class: 'signin', 'aria-busy': 'false' }, form);
  replace(app, main);
  input.focus();
}

// A key revoked or rotated away mid-session ends the session with a reason.
hooks.unauthorized = (err) => {
  session.signOut(`${err.message} Sign in again with a valid key.`);
  render();
};

// Links inside the dashboard change the page without reloading it.
document.addEventListener('click', (ev) => {
  if (ev.defaultPrevented || ev.button !== 0 || ev.metaKey || ev.ctrlKey || ev.shiftKey || ev.altKey) return;
  const a = ev.target.closest('a[href]');
  if (!a || a.target || a.hasAttribute('download')) return;
  const url = new URL(a.href, location.href);
  if (url.origin !== location.origin || url.pathname.startsWith('/v1/') || url.pathname.startsWith('/assets/')) return;
  ev.preventDefault();
  if (url.hash && url.pathname === location.pathname && url.search === location.search) {
    document.getElementById(url.hash.slice(1))?.focus();
    return;
  }
  navigate(url.pathname + url.search);
});
window.addEventListener('popstate', () => render({ focus: true }));

async function start() {
  if (session.key) {
    try {
      session.current = await api('/v1/api-keys/current', { key: session.key });
    } catch (err) {
      if (err.status === 401) {
        session.signOut(`${err.message} Sign in again.`);
      } else {
        // The service is away or busy: keep the key and offer a retry, so
        // that a restart of the service does not sign everyone out.
        replace(main, h('div', { class: 'signin' }, h('div', { class: 'card signin-card' },
          h('h1', { tabindex: '-1' }, err.status === 429 ? 'Too many requests' : 'Mailroom is not answering'),
          errorBox(err),
          h('button', { type: 'button', class: 'btn btn-primary', on: { click: () => location.reload() } }, 'Try again'))));
        main.setAttribute('aria-busy', 'false');
        return;
      }
    }
  }
  render();
}

start();
