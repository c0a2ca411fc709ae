// One template (GET /v1/templates/{name}): an editor that saves a new
// version (PUT), a live preview of the saved version through POST
// …/render with test values the user types, the versions with each one's
// content, and deleting it.
import { h, replace } from '../dom.js';
import { api, enc } from '../api.js';
import { button, confirm, dialog, dl, errorBox, field, pageHeader, pager, table, time, toast } from '../ui.js';
import { ago, when } from '../format.js';
import { previewDocument, withoutRemote } from '../preview.js';

const renderDelay = 400;

export default async function render(ctx) {
  const name = ctx.params[0];
  ctx.setTitle(name);
  const base = `/v1/templates/${enc(name)}`;
  let tpl = await api(base, { signal: ctx.signal });
  ctx.setTitle(tpl.name);

  // ---- The editor ----
  const controls = {
    subject: h('input', { name: 'subject', type: 'text', autocomplete: 'off', spellcheck: 'false', required: true, id: 'tpl-subject' }),
    from: h('input', { name: 'from', type: 'text', autocomplete: 'off', spellcheck: 'false', placeholder: 'orders@yourdomain.com', id: 'tpl-from' }),
    description: h('input', { name: 'description', type: 'text', autocomplete: 'off', maxlength: '1000', id: 'tpl-description' }),
    layout: h('input', { name: 'layout', type: 'text', autocomplete: 'off', spellcheck: 'false', placeholder: 'none', id: 'tpl-layout' }),
    html: h('textarea', { name: 'html', rows: '14', spellcheck: 'false', id: 'tpl-html' }),
    text: h('textarea', { name: 'text', rows: '8', spellcheck: 'false', id: 'tpl-text' }),
  };
  const fill = (t) => {
    controls.subject.value = t.subject;
    controls.from.value = t.from || '';
    controls.description.value = t.description || '';
    controls.layout.value = t.layout ? t.layout.name : '';
    controls.html.value = t.html || '';
    controls.text.value = t.text || '';
  };
  const snapshot = () => JSON.stringify(Object.fromEntries(Object.entries(controls).map(([k, c]) => [k, c.value])));
  fill(tpl);
  let saved = snapshot();

  const saveError = h('div', { class: 'save-error' });
  const saveState = h('span', { class: 'save-state muted small', id: 'save-state', 'aria-live': 'polite' });
  const saveButton = h('button', { type: 'submit', class: 'btn btn-primary', id: 'save-template' }, 'Save');
  const editor = h('form', { class: 'card template-editor', id: 'template-editor', novalidate: true, 'aria-labelledby': 'editor-title' },
    h('div', { class: 'section-head' }, h('h2', { id: 'editor-title' }, 'Content')),
    field('Subject', controls.subject, 'Variables such as {{name}} work here too.'),
    h('div', { class: 'editor-row' },
      field('From (optional)', controls.from, 'Used when a send gives no from. Its domain must be verified.'),
      field('Layout (optional)', controls.layout, 'The name of a template that wraps this one with {{{content}}}.')),
    field('Description (optional)', controls.description),
    field('HTML', controls.html, 'Mustache: {{name}} inserts a value (escaped), {{#items}}…{{/items}} repeats, {{^paid}}…{{/paid}} shows when false.'),
    field('Text', controls.text, 'Leave empty to have it made from the HTML.'),
    saveError,
    h('div', { class: 'save-bar' }, saveButton, saveState));

  const markDirty = () => {
    const dirty = snapshot() !== saved;
    saveState.textContent = dirty ? 'Unsaved changes' : '';
    staleNote.hidden = !dirty;
  };
  editor.addEventListener('input', markDirty);
  editor.addEventListener('keydown', (ev) => {
    if ((ev.ctrlKey || ev.metaKey) && ev.key.toLowerCase() === 's') {
      ev.preventDefault();
      editor.requestSubmit();
    }
  });
  editor.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    if (saveButton.disabled) return;
    replace(saveError);
    for (const c of Object.values(controls)) c.removeAttribute('aria-invalid');
    const body = { subject: controls.subject.value };
    for (const k of ['html', 'text']) if (controls[k].value !== '') body[k] = controls[k].value;
    for (const k of ['from', 'description', 'layout']) if (controls[k].value.trim() !== '') body[k] = controls[k].value.trim();
    saveButton.disabled = true;
    saveButton.textContent = 'Saving…';
    try {
      tpl = await api(base, { method: 'PUT', body, signal: ctx.signal });
    } catch (err) {
      if (err.name === 'AbortError') return;
      replace(saveError, errorBox(err));
      const bad = [...new Set(err.details.map((d) => d.field.split(/[.[]/)[0]))].map((f) => controls[f]).filter(Boolean);
      bad.forEach((c) => c.setAttribute('aria-invalid', 'true'));
      if (bad[0]) bad[0].focus();
      return;
    } finally {
      saveButton.disabled = false;
      saveButton.textContent = 'Save';
      // A button that was disabled while focused has dropped the focus.
      if (document.activeElement === document.body) saveButton.focus();
    }
    fill(tpl);
    saved = snapshot();
    markDirty();
    saveState.textContent = `Saved as version ${tpl.version}.`;
    toast(`Saved ${tpl.name} as version ${tpl.version}.`);
    drawLead();
    drawVariables();
    renderPreview();
    loadVersions('').catch((err) => { if (err.name !== 'AbortError') replace(versionsArea, errorBox(err)); });
  });

  // ---- The preview ----
  // What the user typed for each variable, kept for this tab so that a
  // reload or a visit to another page does not lose it.
  const valuesKey = `mailroom.templateValues.${tpl.id}`;
  const values = new Map(readValues(valuesKey));
  const varsArea = h('div', { class: 'preview-vars' });
  const previewStatus = h('div', { class: 'preview-status', id: 'preview-status', role: 'status' });
  const staleNote = h('p', { class: 'alert alert-warn small stale-note', hidden: true },
    'Your unsaved edits are not in the preview: save to see them.');
  const previewVersion = h('span', { class: 'muted small' });
  const subjectOut = h('p', { class: 'preview-subject', id: 'preview-subject' });
  const frame = h('iframe', { class: 'preview', sandbox: '', title: 'Preview of the HTML', id: 'preview-frame', srcdoc: '' });
  let remoteImages = false;
  let lastHTML = '';
  const remoteNote = h('span', { class: 'small muted' });
  const remoteToggle = h('button', { type: 'button', class: 'btn btn-secondary btn-small', id: 'remote-images' }, 'Load remote images');
  const remoteBar = h('div', { class: 'preview-bar', hidden: true }, remoteNote, remoteToggle);
  remoteToggle.addEventListener('click', () => {
    remoteImages = !remoteImages;
    showHTML(lastHTML);
  });
  const textOut = h('pre', { class: 'text-part', id: 'preview-text' });
  const output = h('div', { class: 'preview-output', hidden: true },
    h('h3', {}, 'Subject'), subjectOut,
    h('h3', {}, 'HTML'), remoteBar, frame,
    h('h3', {}, 'Text'), textOut);
  const preview = h('section', { class: 'card template-preview', id: 'preview', 'aria-labelledby': 'preview-title' },
    h('div', { class: 'section-head' }, h('h2', { id: 'preview-title' }, 'Preview'), previewVersion),
    h('p', { class: 'hint' }, 'Renders the saved version exactly as a send would store it, with the test values below. Nothing is sent.'),
    staleNote,
    varsArea,
    previewStatus,
    output);

  let timer = 0;
  let inFlight = null;
  ctx.signal.addEventListener('abort', () => { clearTimeout(timer); inFlight?.abort(); });

  function drawVariables() {
    previewVersion.textContent = `version ${tpl.version}`;
    if (!tpl.variables.length) {
      replace(varsArea, h('p', { class: 'muted small' }, 'This template uses no variables.'));
      return;
    }
    replace(varsArea, h('fieldset', { class: 'vars-fieldset' },
      h('legend', {}, 'Test values'),
      h('p', { class: 'hint' }, 'Samples such as [name] until you type your own. Text, or JSON ([…], {…}, true) for lists, sections and yes/no values. Empty means not given.'),
      h('div', { class: 'vars-grid' }, tpl.variables.map((v, i) => {
        const input = h('input', {
          type: 'text', autocomplete: 'off', spellcheck: 'false', value: values.has(v) ? values.get(v) : sample(v), dataset: { var: v },
          id: `var-${tpl.version}-${i}`,
        });
        input.addEventListener('input', () => {
          values.set(v, input.value);
          try {
            sessionStorage.setItem(valuesKey, JSON.stringify([...values]));
          } catch {
            // Storage full or refused: the values still work on this page.
          }
          clearTimeout(timer);
          timer = setTimeout(renderPreview, renderDelay);
        });
        return field(h('code', {}, v), input);
      }))));
  }

  async function renderPreview() {
    clearTimeout(timer);
    inFlight?.abort();
    const mine = new AbortController();
    inFlight = mine;
    preview.setAttribute('aria-busy', 'true');
    try {
      const out = await api(`${base}/render`, { method: 'POST', body: { variables: collect(tpl.variables, values) }, signal: mine.signal });
      subjectOut.textContent = out.subject;
      textOut.textContent = out.text;
      replace(previewStatus);
      await showHTML(out.html);
    } catch (err) {
      if (err.name === 'AbortError') return;
      output.hidden = true;
      replace(previewStatus, renderProblem(err));
    } finally {
      if (inFlight === mine) {
        inFlight = null;
        preview.setAttribute('aria-busy', 'false');
      }
    }
  }

  /** showHTML puts html in the frame and resolves when the frame has drawn it. */
  async function showHTML(html) {
    lastHTML = html;
    const stripped = withoutRemote(html);
    const remote = stripped.count;
    remoteBar.hidden = remote === 0;
    remoteNote.textContent = remoteImages
      ? `Showing ${remote} remote ${remote === 1 ? 'image' : 'images'}.`
      : `${remote} remote ${remote === 1 ? 'image is' : 'images are'} not loaded, so the preview contacts no other server.`;
    remoteToggle.textContent = remoteImages ? 'Block remote images' : 'Load remote images';
    const doc = previewDocument(html, remoteImages);
    if (frame.srcdoc === doc && !output.hidden) return;
    const loaded = new Promise((resolve) => {
      frame.addEventListener('load', resolve, { once: true });
      setTimeout(resolve, 3000);
    });
    frame.srcdoc = doc;
    output.hidden = false;
    await loaded;
  }

  // ---- The versions ----
  const versionsArea = h('div', { class: 'versions-list' });
  const versions = h('section', { class: 'card', id: 'versions', 'aria-labelledby': 'versions-title' },
    h('div', { class: 'section-head' }, h('h2', { id: 'versions-title' }, 'Versions')),
    h('p', { class: 'hint' }, 'Each save keeps the version before it; a message records the version it was sent with.'),
    versionsArea);

  async function loadVersions(cursor) {
    const page = await api(`${base}/versions`, { query: { cursor, limit: 10 }, signal: ctx.signal });
    replace(versionsArea,
      table([
        {
          label: 'Version',
          cell: (v) => h('span', { class: 'version-cell' }, h('strong', {}, `v${v.version}`), v.version === tpl.version ? h('span', { class: 'badge badge-good' }, 'current') : null),
          class: 'nowrap',
        },
        { label: 'Subject', cell: (v) => h('span', { class: 'wrap-anywhere' }, v.subject) },
        { label: 'Saved', cell: (v) => time(v.updatedAt), class: 'nowrap' },
        {
          label: '',
          cell: (v) => button('View', () => viewVersion(v.version), {
            kind: 'secondary', class: 'btn btn-secondary btn-small', 'aria-label': `View version ${v.version}`,
          }),
          class: 'nowrap actions-cell',
        },
      ], page.data, { id: 'versions-table', caption: 'Versions, newest first', empty: 'No more versions.' }),
      pager(page.nextCursor, (next) => loadVersions(next).catch(showVersionsError), cursor ? () => loadVersions('').catch(showVersionsError) : null));
  }
  const showVersionsError = (err) => { if (err.name !== 'AbortError') replace(versionsArea, errorBox(err)); };

  async function viewVersion(n) {
    let v;
    try {
      v = await api(`${base}/versions/${n}`, { signal: ctx.signal });
    } catch (err) {
      if (err.name !== 'AbortError') toast(`Could not open version ${n}: ${err.message}`, 'error');
      return;
    }
    const load = await dialog(`${v.name}, version ${v.version}`, (close) => h('div', { class: 'version-view' },
      h('p', { class: 'muted small' }, v.version === tpl.version ? 'The current version.' : 'An earlier version, read-only.'),
      dl([
        ['Saved', h('time', { datetime: v.updatedAt }, when(v.updatedAt))],
        ['Subject', h('code', { class: 'wrap-anywhere' }, v.subject)],
        ['From', v.from || h('span', { class: 'muted' }, 'None')],
        ['Layout', v.layout ? `${v.layout.name} (version ${v.layout.version})` : h('span', { class: 'muted' }, 'None')],
        ['Description', v.description || h('span', { class: 'muted' }, 'None')],
      ]),
      h('h3', { class: 'version-part' }, 'HTML'),
      v.html !== null ? h('pre', { class: 'source' }, v.html) : h('p', { class: 'muted' }, 'None.'),
      h('h3', { class: 'version-part' }, 'Text'),
      v.text !== null ? h('pre', { class: 'text-part' }, v.text) : h('p', { class: 'muted' }, 'None: made from the HTML when sent.'),
      h('div', { class: 'dialog-actions' },
        v.version !== tpl.version
          ? h('button', { type: 'button', class: 'btn btn-secondary', on: { click: () => close(true) } }, 'Copy into the editor')
          : null,
        h('button', { type: 'button', class: 'btn btn-primary', on: { click: () => close(false) } }, 'Close'))),
    { wide: true });
    if (load) {
      fill(v);
      markDirty();
      controls.subject.focus();
      toast(`Version ${v.version} is in the editor: save to make it the current version.`);
    }
  }

  // ---- The page ----
  const leadInfo = h('span', {});
  const drawLead = () => replace(leadInfo,
    tpl.description ? `${tpl.description} · ` : 'Edit, preview with test values, and save a new version. ',
    `Version ${tpl.version}, saved `, h('time', { datetime: tpl.updatedAt, title: when(tpl.updatedAt) }, ago(tpl.updatedAt)), '.');
  drawLead();
  const deleteError = h('div', { class: 'config-danger-error' });
  const remove = button('Delete template', async () => {
    replace(deleteError);
    const yes = await confirm(`Delete ${tpl.name}?`,
      `The template and ${tpl.version === 1 ? 'its only version are' : `all ${tpl.version} of its versions are`} deleted, and sends that name it fail from now on. Messages already sent keep what they recorded.`,
      'Delete template');
    if (!yes) return;
    try {
      await api(base, { method: 'DELETE', signal: ctx.signal });
    } catch (err) {
      if (err.name === 'AbortError') return;
      replace(deleteError, errorBox(err));
      return;
    }
    sessionStorage.removeItem(valuesKey);
    toast(`Deleted ${tpl.name}.`);
    ctx.navigate('/templates');
  }, { kind: 'danger', id: 'delete-template' });

  replace(ctx.main,
    pageHeader(tpl.name, {
      back: { href: '/templates', text: 'Templates' },
      lead: leadInfo,
    }),
    h('div', { class: 'template-layout' }, editor, preview),
    versions,
    h('section', { class: 'card config-danger', 'aria-labelledby': 'delete-template-title' },
      h('div', { class: 'config-danger-text' },
        h('h2', { id: 'delete-template-title' }, 'Delete this template'),
        h('p', { class: 'muted small' }, 'Sends that name it fail from now on; messages already sent keep what they recorded.'),
        deleteError),
      remove));

  drawVariables();
  await Promise.all([
    renderPreview(),
    loadVersions('').catch((err) => { if (err.name === 'AbortError') throw err; replace(versionsArea, errorBox(err)); }),
  ]);
}

function readValues(key) {
  try {
    const v = JSON.parse(sessionStorage.getItem(key) || '[]');
    return Array.isArray(v) ? v.filter((e) => Array.isArray(e) && e.length === 2 && typeof e[1] === 'string') : [];
  } catch {
    return [];
  }
}

/**
 * sample is a variable's value until the user types one, so that a
 * template opens with its preview drawn and shows where each value goes.
 */
function sample(name) {
  return `[${name}]`;
}

/**
 * collect builds the render's variables from the test values (a sample
 * where the user typed none): empty inputs are left out, so that the
 * service names what is missing; dotted names become nested objects; JSON
 * lists, objects and booleans are sent as JSON.
 */
function collect(names, values) {
  const out = {};
  for (const name of names) {
    const raw = values.has(name) ? values.get(name) : sample(name);
    if (raw === '') continue;
    let value = raw;
    const t = raw.trim();
    if (/^[[{]/.test(t) || t === 'true' || t === 'false') {
      try {
        value = JSON.parse(t);
      } catch {
        value = raw;
      }
    }
    const parts = name.split('.');
    let at = out;
    for (const p of parts.slice(0, -1)) {
      if (typeof at[p] !== 'object' || at[p] === null || Array.isArray(at[p])) at[p] = {};
      at = at[p];
    }
    const last = parts[parts.length - 1];
    if (typeof at[last] === 'object' && at[last] !== null && typeof value === 'object' && value !== null && !Array.isArray(value)) {
      Object.assign(at[last], value);
    } else if (!(typeof at[last] === 'object' && at[last] !== null)) {
      at[last] = value;
    }
  }
  return out;
}

/** renderProblem explains a refused render as help, not as a failure. */
function renderProblem(err) {
  if (err.status === 400 && err.code === 'validation_error' && err.details.length) {
    const missing = err.details.filter((d) => d.field.startsWith('variables.') && /must be given/.test(d.message))
      .map((d) => d.field.slice('variables.'.length));
    const other = err.details.filter((d) => !(d.field.startsWith('variables.') && /must be given/.test(d.message)));
    return h('div', { class: 'alert alert-info preview-help' },
      missing.length ? h('p', {}, 'To see the preview, type a value for ',
        missing.map((m, i) => [i ? (i === missing.length - 1 ? ' and ' : ', ') : '', h('code', {}, m)]),
        '. A send without ', missing.length > 1 ? 'them' : 'it', ' would be refused.') : null,
      other.length ? [
        h('p', {}, 'A send with these values would be refused:'),
        h('ul', {}, other.map((d) => h('li', {}, h('code', {}, d.field), ': ', d.message))),
      ] : null);
  }
  return errorBox(err);
}
