// Forms for interrupts, drawn from each interrupt's responseSchema: the
// answer a run ended waiting for. Booleans become checkboxes, strings text
// inputs (a select for an enum), numbers number inputs, and anything nested
// (an object such as a tool call's editedArgs, an array) a JSON text area.
// The bridge validates every answer against the schema itself; the form's
// own checks only save a round trip.

import { h, pretty } from './render.js';

const REASON_TITLES = {
  tool_call: 'Approval needed',
  input_required: 'The agent asks',
  confirmation: 'Please confirm',
  'a2a:auth_required': 'Sign-in required',
};

let uniq = 0;
const fieldId = (name) => `f${++uniq}-${name.replace(/[^a-zA-Z0-9_-]/g, '_')}`;

// field draws one schema property and returns {el, read} where read()
// returns the value to send (undefined to leave the key out) or throws an
// Error naming what is wrong.
function field(name, schema, { required, prefill }) {
  const id = fieldId(name);
  const title = schema?.title || name;
  const hint = schema?.description ? h('small', { class: 'hint' }, schema.description) : null;
  const label = h('label', { for: id }, title, required ? h('span', { class: 'required', 'aria-hidden': 'true' }, ' *') : null);
  const type = Array.isArray(schema?.type) ? schema.type.find((t) => t !== 'null') : schema?.type;

  if (type === 'boolean') {
    const input = h('input', { id, type: 'checkbox', name, checked: prefill ?? schema.default ?? false });
    return { el: h('div', { class: 'field checkbox' }, input, label, hint), read: () => input.checked };
  }
  if ((type === 'string' || (type === undefined && schema?.enum)) && Array.isArray(schema?.enum)) {
    const select = h('select', { id, name, required },
      required ? null : h('option', { value: '' }, '—'),
      schema.enum.map((v) => h('option', { value: String(v), selected: v === (prefill ?? schema.default) }, String(v))));
    return { el: h('div', { class: 'field' }, label, select, hint), read: () => (select.value === '' ? undefined : schema.enum.find((v) => String(v) === select.value)) };
  }
  if (type === 'string') {
    const input = h('input', { id, type: 'text', name, required, value: prefill ?? schema.default ?? '', minlength: schema.minLength, maxlength: schema.maxLength, pattern: schema.pattern, autocomplete: 'off' });
    return { el: h('div', { class: 'field' }, label, input, hint), read: () => (input.value === '' && !required ? undefined : input.value) };
  }
  if (type === 'number' || type === 'integer') {
    const input = h('input', { id, type: 'number', name, required, step: type === 'integer' ? '1' : 'any', min: schema.minimum, max: schema.maximum, value: prefill ?? schema.default ?? '' });
    return {
      el: h('div', { class: 'field' }, label, input, hint),
      read: () => {
        if (input.value === '') {
          if (required) throw new Error(`${title} is required`);
          return undefined;
        }
        return Number(input.value);
      },
    };
  }
  // object, array, or a schema without a type: JSON in a text area.
  const text = prefill !== undefined ? (typeof prefill === 'string' ? pretty(prefill) : JSON.stringify(prefill, null, 2)) : schema?.default !== undefined ? JSON.stringify(schema.default, null, 2) : '';
  const area = h('textarea', { id, name, rows: Math.min(12, Math.max(3, text.split('\n').length + 1)), spellcheck: 'false', class: 'json-input', required }, text);
  area.value = text;
  return {
    el: h('div', { class: 'field' }, label, area, h('small', { class: 'hint' }, schema?.description ?? 'JSON')),
    read: () => {
      if (area.value.trim() === '') {
        if (required) throw new Error(`${title} is required`);
        return undefined;
      }
      try {
        return JSON.parse(area.value);
      } catch (err) {
        area.setCustomValidity(`not valid JSON: ${err.message}`);
        area.reportValidity();
        area.addEventListener('input', () => area.setCustomValidity(''), { once: true });
        throw new Error(`${title} is not valid JSON`);
      }
    },
  };
}

// schemaForm draws the fields of an object schema; read() returns the
// payload. A schema that is not an object with properties gets one field for
// the whole answer (a free text area when there is no schema at all, whose
// text is sent as JSON when it parses and as a string otherwise).
function schemaForm(schema, prefills) {
  const props = schema?.type === 'object' || schema?.properties ? schema.properties : null;
  if (props && Object.keys(props).length > 0) {
    const required = new Set(schema.required ?? []);
    const fields = Object.entries(props).map(([name, s]) => [name, field(name, s, { required: required.has(name), prefill: prefills[name] })]);
    return {
      el: h('div', { class: 'fields' }, fields.map(([, f]) => f.el)),
      read: () => {
        const out = {};
        for (const [name, f] of fields) {
          const v = f.read();
          if (v !== undefined) out[name] = v;
        }
        return out;
      },
    };
  }
  if (schema && schema.type && schema.type !== 'object') {
    const f = field('answer', { ...schema, title: schema.title ?? 'Answer' }, { required: true });
    return { el: h('div', { class: 'fields' }, f.el), read: () => f.read() };
  }
  const id = fieldId('answer');
  const area = h('textarea', { id, rows: 3, required: true });
  return {
    el: h('div', { class: 'fields' }, h('div', { class: 'field' }, h('label', { for: id }, 'Answer'), area, h('small', { class: 'hint' }, 'Text, or JSON'))),
    read: () => {
      try {
        return JSON.parse(area.value);
      } catch {
        return area.value;
      }
    },
  };
}

// interruptsForm draws one fieldset per pending interrupt and calls
// onAnswer(resumeEntries) with an entry for every one of them (the bridge
// wants them all answered at once), or onCancel() for "cancel them all".
// toolCall(id) gives a tool call's {name, args} for tool_call interrupts;
// member(interrupt) the team member that asks, if any.
export function interruptsForm(interrupts, { toolCall, member = () => null, onAnswer, onCancel }) {
  const single = interrupts.length === 1;
  const decisions = interrupts.map((it) => {
    const call = it.toolCallId ? toolCall(it.toolCallId) : null;
    const isTool = it.reason === 'tool_call';
    const prefills = {};
    if (isTool) {
      prefills.approved = true;
      if (call?.args) {
        try {
          prefills.editedArgs = JSON.parse(call.args);
        } catch {
          prefills.editedArgs = call.args;
        }
      }
    }
    const form = schemaForm(it.responseSchema, prefills);
    const who = member(it);
    const fs = h('fieldset', { class: `interrupt ${isTool ? 'tool-approval' : ''}`, dataset: { interruptId: it.id, reason: it.reason } },
      h('legend', {}, REASON_TITLES[it.reason] ?? it.reason, isTool && call?.name ? h('code', {}, ` ${call.name}`) : null,
        who ? h('span', { class: 'badge subagent-badge', title: `asked by ${who}`, dataset: { subagentRunId: it.subagentRunId } }, who) : null),
      it.message ? h('p', { class: 'interrupt-message' }, it.message) : null);
    const auth = it.metadata?.a2a?.auth;
    if (auth) fs.append(h('pre', { class: 'auth' }, JSON.stringify(auth, null, 2)));
    const d = { interrupt: it, mode: isTool ? 'choose' : 'form', read: form.read, fs };
    if (isTool) {
      // Approve / Deny answer at once; Edit opens the schema's form with the
      // call's arguments to change (editedArgs replaces them whole).
      fs.append(h('pre', { class: 'tool-args' }, pretty(call?.args ?? '')));
      const editor = h('div', { class: 'editor', hidden: true }, form.el);
      const approve = h('button', { type: 'button', class: 'primary', 'aria-pressed': 'false' }, 'Approve');
      const deny = h('button', { type: 'button', class: 'danger', 'aria-pressed': 'false' }, 'Deny');
      const edit = h('button', { type: 'button', 'aria-expanded': 'false' }, 'Edit');
      const choose = (mode) => {
        d.mode = mode;
        approve.setAttribute('aria-pressed', String(mode === 'approve'));
        deny.setAttribute('aria-pressed', String(mode === 'deny'));
        editor.hidden = mode !== 'edit';
        edit.setAttribute('aria-expanded', String(mode === 'edit'));
        if (mode === 'edit') editor.querySelector('textarea, input')?.focus();
      };
      approve.addEventListener('click', () => {
        choose('approve');
        if (single) submit();
      });
      deny.addEventListener('click', () => {
        choose('deny');
        if (single) submit();
      });
      edit.addEventListener('click', () => choose(d.mode === 'edit' ? 'choose' : 'edit'));
      fs.append(h('div', { class: 'actions' }, approve, deny, edit), editor);
    } else {
      fs.append(form.el);
    }
    return d;
  });

  const error = h('p', { class: 'form-error', role: 'alert' });
  const root = h('form', { class: 'interrupts-form', 'aria-label': 'Answer the agent', novalidate: false });
  const anyForm = decisions.some((d) => d.mode === 'form');
  const sendLabel = anyForm || !single ? (single ? 'Send answer' : 'Send answers') : 'Send edited call';
  const send = h('button', { type: 'submit', class: 'primary' }, sendLabel);
  const cancel = h('button', { type: 'button', class: 'ghost' }, single ? 'Cancel request' : 'Cancel all');
  root.append(...decisions.map((d) => d.fs), error, h('div', { class: 'actions form-actions' }, send, cancel));
  // "Send edited call" only makes sense once an editor is open.
  const syncSend = () => {
    send.hidden = !anyForm && single && decisions[0].mode !== 'edit';
  };
  syncSend();
  root.addEventListener('click', syncSend);

  function submit() {
    error.textContent = '';
    const entries = [];
    for (const d of decisions) {
      const id = d.interrupt.id;
      try {
        switch (d.mode) {
          case 'approve':
            entries.push({ interruptId: id, status: 'resolved', payload: { approved: true } });
            break;
          case 'deny':
            entries.push({ interruptId: id, status: 'resolved', payload: { approved: false } });
            break;
          case 'edit':
          case 'form':
            entries.push({ interruptId: id, status: 'resolved', payload: d.read() });
            break;
          default:
            throw new Error(`choose Approve, Deny or Edit for ${d.interrupt.message ?? id}`);
        }
      } catch (err) {
        error.textContent = err.message;
        return;
      }
    }
    root.querySelectorAll('button').forEach((b) => (b.disabled = true));
    onAnswer(entries);
  }

  root.addEventListener('submit', (ev) => {
    ev.preventDefault();
    if (!root.reportValidity()) return;
    submit();
  });
  cancel.addEventListener('click', () => {
    root.querySelectorAll('button').forEach((b) => (b.disabled = true));
    onCancel();
  });
  return root;
}
