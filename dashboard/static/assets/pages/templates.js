// The account's templates (GET /v1/templates), and making a new one with a
// starter body that the template's own page then edits.
import { h, replace } from '../dom.js';
import { api, enc } from '../api.js';
import { dialog, errorBox, field, pageHeader, pager, table, time, toast } from '../ui.js';

export default async function render(ctx) {
  ctx.setTitle('Templates');
  const cursor = ctx.query.get('cursor') || '';
  const page = await api('/v1/templates', { query: { cursor, limit: 25 }, signal: ctx.signal });

  const create = () => newTemplate(ctx);
  replace(ctx.main,
    pageHeader('Templates', {
      lead: 'Subjects and bodies with {{variables}}, kept in one place and versioned: a send names the template and gives the values.',
      actions: h('button', { type: 'button', class: 'btn btn-primary', id: 'new-template', on: { click: create } }, 'New template'),
    }),
    page.data.length || cursor ? templateTable(page.data) : emptyState(create),
    pager(page.nextCursor,
      (next) => ctx.navigate(`/templates?cursor=${encodeURIComponent(next)}`),
      cursor ? () => ctx.navigate('/templates') : null));
}

function templateTable(templates) {
  return table([
    {
      label: 'Name',
      cell: (t) => h('div', {},
        h('a', { class: 'template-link row-title', href: `/templates/${enc(t.name)}` }, t.name),
        h('div', { class: 'row-sub' }, t.subject)),
    },
    { label: 'Description', cell: (t) => (t.description ? t.description : h('span', { class: 'muted' }, '—')) },
    { label: 'Version', cell: (t) => `v${t.version}`, class: 'nowrap' },
    { label: 'Updated', cell: (t) => time(t.updatedAt), class: 'nowrap' },
  ], templates, { id: 'templates', caption: 'Templates', empty: 'No more templates.' });
}

function emptyState(create) {
  return h('div', { class: 'empty config-empty', id: 'templates-empty' },
    h('h2', {}, 'No templates yet'),
    h('p', {}, 'A template keeps a message’s subject, HTML and text with {{variables}} such as {{name}}. ',
      'Your code then sends with ', h('code', {}, '"template": "welcome"'), ' and the values, and you change the wording here without a deploy.'),
    h('button', { type: 'button', class: 'btn btn-primary', on: { click: create } }, 'Create your first template'));
}

/** newTemplate asks for a name and subject, creates it with a starter body, and opens it. */
async function newTemplate(ctx) {
  const created = await dialog('New template', (close) => {
    const name = h('input', {
      name: 'name', type: 'text', required: true, autocomplete: 'off', spellcheck: 'false', autocapitalize: 'off',
      pattern: '[a-z0-9][a-z0-9_-]{0,63}', maxlength: '64', placeholder: 'welcome', id: 'template-name',
    });
    const subject = h('input', { name: 'subject', type: 'text', required: true, autocomplete: 'off', placeholder: 'Welcome, {{name}}', id: 'template-subject' });
    const description = h('input', { name: 'description', type: 'text', autocomplete: 'off', maxlength: '1000', id: 'template-description' });
    const controls = { name, subject, description };
    const errorSlot = h('div', { class: 'config-dialog-error' });
    const submit = h('button', { type: 'submit', class: 'btn btn-primary' }, 'Create template');
    const form = h('form', { id: 'new-template-form', novalidate: true },
      field('Name', name, 'What sends use to name it: lower-case letters, digits, - and _, such as welcome or password-reset. It cannot change later.'),
      field('Subject', subject, 'May use variables, such as Welcome, {{name}}.'),
      field('Description (optional)', description, 'A note for your team: what it is for, where it is sent from.'),
      h('p', { class: 'hint' }, 'It starts with a short HTML and text body that you edit on the next page.'),
      errorSlot,
      h('div', { class: 'dialog-actions' },
        h('button', { type: 'button', class: 'btn btn-secondary', on: { click: () => close() } }, 'Cancel'),
        submit));
    form.addEventListener('submit', async (ev) => {
      ev.preventDefault();
      replace(errorSlot);
      for (const c of Object.values(controls)) c.removeAttribute('aria-invalid');
      const body = {
        name: name.value.trim(),
        subject: subject.value.trim(),
        html: '<p>Hello {{name}},</p>\n<p>Write your message here.</p>',
        text: 'Hello {{name}},\n\nWrite your message here.',
      };
      if (description.value.trim()) body.description = description.value.trim();
      const missing = [!body.name && name, !body.subject && subject].filter(Boolean);
      if (missing.length) {
        replace(errorSlot, h('p', { class: 'form-error', role: 'alert' }, !body.name ? 'Give the template a name.' : 'Give the template a subject.'));
        missing.forEach((c) => c.setAttribute('aria-invalid', 'true'));
        missing[0].focus();
        return;
      }
      submit.disabled = true;
      submit.textContent = 'Creating…';
      try {
        close(await api('/v1/templates', { method: 'POST', body, signal: ctx.signal }));
      } catch (err) {
        if (err.name === 'AbortError') return;
        replace(errorSlot, errorBox(err));
        const bad = [...new Set(err.details.map((d) => d.field))].map((f) => controls[f]).filter(Boolean);
        if (err.code === 'already_exists') bad.push(name);
        bad.forEach((c) => c.setAttribute('aria-invalid', 'true'));
        (bad[0] || name).focus();
      } finally {
        submit.disabled = false;
        submit.textContent = 'Create template';
      }
    });
    return form;
  });
  if (!created) return;
  toast(`Created ${created.name}, version 1.`);
  ctx.navigate(`/templates/${enc(created.name)}`);
}
