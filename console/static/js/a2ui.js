// A small A2UI renderer (github.com/google/A2UI) for the console: the
// standard catalog of v0.8 and the basic catalog of v0.9/v0.10, drawn with
// plain DOM elements. The official @a2ui/lit 0.11.0 components import six
// packages by bare specifier (lit, @lit/context, @lit-labs/signals,
// signal-utils, zod, @a2ui/web_core) and need a bundler; the console has no
// build step, so it renders surfaces itself.
//
// A surface is built by folding its operations (an a2ui-surface activity's
// content.operations) in order; the user's edits live in the surface's data
// model on the page, and an action resolves its context against that model
// and goes to onAction as {name, surfaceId, sourceComponentId, timestamp,
// context}. Everything the agent sends is put in the page as text, and image
// sources only with safe schemes.

import { h, inlineURL, safeURL } from './render.js';

// surfaceIdOf names the surface an operation addresses.
export function surfaceIdOf(op) {
  for (const [k, v] of Object.entries(op ?? {})) {
    if (k !== 'version' && v && typeof v === 'object' && typeof v.surfaceId === 'string') return v.surfaceId;
  }
  return null;
}

// buildSurface folds operations into surface models, by surface id.
export function buildSurfaces(operations) {
  const surfaces = new Map();
  const get = (id, version) => {
    let s = surfaces.get(id);
    if (!s) {
      s = { id, version: version ?? 'v0.9', components: new Map(), data: {}, root: 'root', ready: false, deleted: false };
      surfaces.set(id, s);
    }
    return s;
  };
  for (const op of operations ?? []) {
    const id = surfaceIdOf(op);
    if (!id) continue;
    if (op.createSurface) {
      const s = get(id, op.version ?? 'v0.9');
      Object.assign(s, { version: op.version ?? 'v0.9', catalogId: op.createSurface.catalogId, ready: true, deleted: false });
    } else if (op.beginRendering) {
      const s = get(id, 'v0.8');
      Object.assign(s, { version: 'v0.8', root: op.beginRendering.root ?? 'root', ready: true, deleted: false });
    } else if (op.surfaceUpdate) {
      const s = get(id, 'v0.8');
      s.version = 'v0.8';
      for (const c of op.surfaceUpdate.components ?? []) {
        const [kind, props] = Object.entries(c?.component ?? {})[0] ?? [];
        if (c?.id && kind) s.components.set(c.id, { id: c.id, kind, props: props ?? {} });
      }
    } else if (op.updateComponents) {
      const s = get(id, op.version);
      for (const c of op.updateComponents.components ?? []) {
        if (!c?.id || typeof c.component !== 'string') continue;
        const { id: cid, component, ...props } = c;
        s.components.set(cid, { id: cid, kind: component, props });
      }
      // A v0.9 surface may be updated before (or without) createSurface.
      if (!s.ready && s.version !== 'v0.8') s.ready = true;
    } else if (op.dataModelUpdate) {
      const s = get(id, 'v0.8');
      const u = op.dataModelUpdate;
      const target = ensureObject(s.data, u.path ?? '/');
      if (target) for (const entry of u.contents ?? []) if (safeKey(entry?.key)) target[entry.key] = v08Value(entry);
    } else if (op.updateDataModel) {
      const s = get(id, op.version);
      const u = op.updateDataModel;
      if ('value' in u) s.data = setPath(s.data, u.path ?? '/', structuredClone(u.value));
      else s.data = setPath(s.data, u.path ?? '/', undefined);
    } else if (op.deleteSurface) {
      const s = get(id);
      Object.assign(s, { deleted: true, ready: false, components: new Map(), data: {} });
    }
  }
  return surfaces;
}

// v08Value is a v0.8 data entry's value (valueString, valueNumber,
// valueBoolean, valueMap of entries).
function v08Value(entry) {
  if ('valueString' in entry) return entry.valueString;
  if ('valueNumber' in entry) return entry.valueNumber;
  if ('valueBoolean' in entry) return entry.valueBoolean;
  if (Array.isArray(entry.valueMap)) {
    const o = {};
    for (const e of entry.valueMap) if (safeKey(e?.key)) o[e.key] = v08Value(e);
    return o;
  }
  return null;
}

const segments = (path) => String(path ?? '').split('/').filter(Boolean).map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));

function getPath(data, path) {
  let cur = data;
  for (const seg of segments(path)) {
    if (cur == null || typeof cur !== 'object' || !Object.hasOwn(cur, seg)) return undefined;
    cur = cur[seg];
  }
  return cur;
}

// A key naming a prototype is refused wherever the data model is written:
// a dataModelUpdate at /__proto__ (or /constructor/prototype/x) made every
// object of the page inherit the agent's keys for the tab's lifetime, so
// that ({}).method === "PUT" and the console's next request went out as a
// PUT (issue 33 item 3). (jsonpatch.js writes such a key as a plain own
// property instead, which is safe there.)
const UNSAFE_KEYS = new Set(['__proto__', 'constructor', 'prototype']);
const safeKey = (k) => typeof k === 'string' && k !== '' && !UNSAFE_KEYS.has(k);

// child is the object at cur[seg], made one when cur has none of its own.
function child(cur, seg) {
  if (!Object.hasOwn(cur, seg) || !cur[seg] || typeof cur[seg] !== 'object') cur[seg] = {};
  return cur[seg];
}

// setPath writes value (undefined: removes) at path; a path with an unsafe
// segment changes nothing.
function setPath(data, path, value) {
  const segs = segments(path);
  if (!segs.every(safeKey)) return data;
  if (segs.length === 0) return value === undefined ? {} : value;
  const root = data && typeof data === 'object' ? data : {};
  let cur = root;
  for (const seg of segs.slice(0, -1)) cur = child(cur, seg);
  const last = segs[segs.length - 1];
  if (value === undefined) delete cur[last];
  else cur[last] = value;
  return root;
}

// ensureObject is the object at path, made where missing; null for a path
// with an unsafe segment.
function ensureObject(data, path) {
  const segs = segments(path);
  if (!segs.every(safeKey)) return null;
  let cur = data;
  for (const seg of segs) cur = child(cur, seg);
  return cur;
}

// join resolves a relative path (inside a template) against the item's scope.
const join = (scope, path) => (String(path).startsWith('/') ? path : `${scope.replace(/\/$/, '')}/${path}`);

// Bound values: v0.8 {literalString|literalNumber|literalBoolean, path};
// v0.9 a literal, or {path}.
function boundPath(v) {
  return v && typeof v === 'object' && !Array.isArray(v) && typeof v.path === 'string' ? v.path : null;
}

function resolve(s, v, scope) {
  if (v && typeof v === 'object' && !Array.isArray(v)) {
    const p = boundPath(v);
    if (p != null) {
      const got = getPath(s.data, join(scope, p));
      if (got !== undefined) return got;
    }
    for (const k of ['literalString', 'literalNumber', 'literalBoolean', 'literalArray']) if (k in v) return v[k];
    return p != null ? undefined : v;
  }
  return v;
}

const text = (s, v, scope) => {
  const r = resolve(s, v, scope);
  return r == null ? '' : typeof r === 'object' ? JSON.stringify(r) : String(r);
};

// childIds lists a container's children: v0.8 {explicitList} or
// {template: {componentId, dataBinding}}, v0.9 an array or {componentId, path}.
function children(s, spec, scope) {
  if (Array.isArray(spec)) return spec.map((id) => [id, scope]);
  if (Array.isArray(spec?.explicitList)) return spec.explicitList.map((id) => [id, scope]);
  const tpl = spec?.template ?? (spec?.componentId ? spec : null);
  if (tpl?.componentId) {
    const path = join(scope, tpl.dataBinding ?? tpl.path ?? '');
    const list = getPath(s.data, path);
    const keys = Array.isArray(list) ? list.map((_, i) => String(i)) : list && typeof list === 'object' ? Object.keys(list) : [];
    return keys.map((k) => [tpl.componentId, `${path.replace(/\/$/, '')}/${k}`]);
  }
  return [];
}

// actionOf is a Button's action as {name, context: {key: bound}}.
function actionOf(props) {
  const a = props.action;
  if (!a) return null;
  if (a.event) return { name: a.event.name, context: a.event.context ?? {} };
  const ctx = {};
  if (Array.isArray(a.context)) {
    for (const e of a.context) if (e?.key) ctx[e.key] = e.value;
  } else if (a.context && typeof a.context === 'object') {
    Object.assign(ctx, a.context);
  }
  return { name: a.name, context: ctx };
}

function bindInput(s, ctx, bound, scope, el, read) {
  const p = boundPath(bound);
  if (p == null) return el;
  el.addEventListener('input', () => {
    s.data = setPath(s.data, join(scope, p), read(el));
    ctx.changed(s);
  });
  el.addEventListener('change', () => {
    s.data = setPath(s.data, join(scope, p), read(el));
    ctx.changed(s);
  });
  return el;
}

const HEADINGS = { h1: 'h2', h2: 'h3', h3: 'h4', h4: 'h5', h5: 'h6' };

// MAX_NODES bounds the components one surface draws. Depth alone does not
// bound the work: 46 nested Rows each naming the next twice (a 6.8 KB
// event) asked for 2^46 draws and froze the tab (issue 33 item 4).
export const MAX_NODES = 5000;

function renderComponent(s, id, scope, ctx, depth) {
  const c = s.components.get(id);
  if (!c || depth > 40) return null; // not arrived yet, or a cycle
  if (ctx.drawn >= MAX_NODES) {
    ctx.truncated = true;
    return null;
  }
  ctx.drawn++;
  const p = c.props;
  const kids = (spec) => children(s, spec, scope).map(([cid, sc]) => renderComponent(s, cid, sc, ctx, depth + 1));
  const one = (cid) => (cid ? renderComponent(s, cid, scope, ctx, depth + 1) : null);
  const attrs = { class: `a2ui-${c.kind.toLowerCase()}`, dataset: { a2uiId: id, a2uiKind: c.kind } };
  const label = (v) => (v == null ? null : h('span', { class: 'a2ui-label' }, text(s, v, scope)));
  switch (c.kind) {
    case 'Text':
    case 'Heading': {
      const hint = p.variant ?? p.usageHint ?? (c.kind === 'Heading' ? 'h2' : 'body');
      return h(HEADINGS[hint] ?? (hint === 'caption' ? 'small' : 'p'), attrs, text(s, p.text, scope));
    }
    case 'Image': {
      const url = safeURL(text(s, p.url, scope));
      const alt = text(s, p.description ?? p.altText, scope);
      if (!url) return null;
      const src = inlineURL(url);
      // An image elsewhere is a link, never loaded by the page (render.js inlineURL).
      return src ? h('img', { ...attrs, src, alt }) : h('a', { ...attrs, href: url, target: '_blank', rel: 'noopener noreferrer' }, alt || url);
    }
    case 'Icon':
      return h('span', { ...attrs, title: text(s, p.name, scope) }, `[${text(s, p.name, scope)}]`);
    case 'Row':
    case 'Column':
    case 'List':
      return h('div', attrs, kids(p.children));
    case 'Card':
      return h('div', attrs, one(p.child));
    case 'Divider':
      return h('hr', attrs);
    case 'Button': {
      const act = actionOf(p);
      return h('button', {
        ...attrs, type: 'button', class: `${attrs.class}${p.primary || p.variant === 'primary' ? ' primary' : ''}`,
        onclick: () => {
          if (!act) return;
          const context = {};
          for (const [k, v] of Object.entries(act.context)) context[k] = resolve(s, v, scope) ?? null;
          ctx.onAction({ name: act.name, surfaceId: s.id, sourceComponentId: id, timestamp: new Date().toISOString(), context }, s.version);
        },
      }, one(p.child) ?? text(s, p.label, scope));
    }
    case 'TextField': {
      const bound = p.value ?? p.text;
      const kind = p.textFieldType ?? p.variant ?? 'shortText';
      const type = { number: 'number', date: 'date', obscured: 'password' }[kind] ?? 'text';
      const input = kind === 'longText' ? h('textarea', { name: id }) : h('input', { type, name: id });
      input.value = text(s, bound, scope);
      bindInput(s, ctx, bound, scope, input, (el) => (type === 'number' ? Number(el.value) : el.value));
      return h('label', attrs, label(p.label), input);
    }
    case 'CheckBox': {
      const input = h('input', { type: 'checkbox', name: id });
      input.checked = Boolean(resolve(s, p.value ?? p.checked, scope));
      bindInput(s, ctx, p.value ?? p.checked, scope, input, (el) => el.checked);
      return h('label', attrs, input, label(p.label));
    }
    case 'DateTimeInput': {
      const type = p.enableTime && p.enableDate !== false ? 'datetime-local' : p.enableTime ? 'time' : 'date';
      const input = h('input', { type, name: id });
      input.value = text(s, p.value, scope);
      bindInput(s, ctx, p.value, scope, input, (el) => el.value);
      return h('label', attrs, label(p.label), input);
    }
    case 'Slider': {
      const input = h('input', { type: 'range', name: id, min: p.minValue ?? p.min ?? 0, max: p.maxValue ?? p.max ?? 100 });
      const shown = h('output', {}, text(s, p.value, scope));
      input.value = text(s, p.value, scope);
      bindInput(s, ctx, p.value, scope, input, (el) => Number(el.value));
      input.addEventListener('input', () => (shown.textContent = input.value));
      return h('label', attrs, label(p.label), input, shown);
    }
    case 'MultipleChoice':
    case 'ChoicePicker': {
      const bound = p.selections ?? p.value;
      const max = p.maxAllowedSelections ?? (p.variant === 'multipleSelection' ? Infinity : 1);
      const select = h('select', { name: id, multiple: max > 1 });
      const current = [resolve(s, bound, scope)].flat().map(String);
      for (const o of p.options ?? []) {
        const opt = h('option', { value: o.value }, text(s, o.label, scope));
        opt.selected = current.includes(String(o.value));
        select.append(opt);
      }
      bindInput(s, ctx, bound, scope, select, (el) => [...el.selectedOptions].map((o) => o.value));
      return h('label', attrs, label(p.label ?? p.description), select);
    }
    case 'Tabs': {
      const tabs = p.tabItems ?? p.tabs ?? [];
      const panel = h('div', { class: 'a2ui-tab-panel' });
      const show = (i) => {
        panel.replaceChildren(one(tabs[i]?.child) ?? '');
        bar.querySelectorAll('button').forEach((b, j) => b.classList.toggle('active', j === i));
      };
      const bar = h('div', { class: 'a2ui-tab-bar' }, tabs.map((t, i) => h('button', { type: 'button', onclick: () => show(i) }, text(s, t.title, scope))));
      const el = h('div', attrs, bar, panel);
      if (tabs.length) show(0);
      return el;
    }
    case 'Modal': {
      const d = h('details', attrs, h('summary', {}, one(p.entryPointChild ?? p.trigger) ?? 'Open'), h('div', { class: 'a2ui-modal-body' }, one(p.contentChild ?? p.content)));
      return d;
    }
    default:
      // A component outside the standard catalog: named, its children drawn.
      return h('div', { ...attrs, class: 'a2ui-unknown', title: `component ${c.kind} is not in the standard catalog` },
        h('small', { class: 'muted' }, c.kind), p.child ? one(p.child) : null, p.children ? kids(p.children) : null);
  }
}

// renderSurfaces draws the surfaces operations build. onAction(action,
// version) is called when the user presses a button; inert surfaces (an
// older activity a later one continues) show but do not act.
export function renderSurfaces(operations, { onAction, inert = false, local } = {}) {
  const surfaces = buildSurfaces(operations);
  const out = [];
  for (const s of surfaces.values()) {
    // The user's edits survive a redraw of the same activity.
    const saved = local?.get(s.id);
    if (saved) s.data = saved;
    const ctx = { onAction: inert ? () => {} : onAction ?? (() => {}), changed: (x) => local?.set(x.id, x.data), drawn: 0, truncated: false };
    if (s.deleted) {
      out.push(h('div', { class: 'a2ui-surface deleted muted', dataset: { surfaceId: s.id } }, `surface ${s.id} closed`));
      continue;
    }
    if (!s.ready) continue;
    const drawn = renderComponent(s, s.root, '/', ctx, 0);
    out.push(h('div', { class: `a2ui-surface${inert ? ' inert' : ''}`, dataset: { surfaceId: s.id, a2uiVersion: s.version, ...(ctx.truncated && { truncated: 'true' }) }, inert },
      drawn ?? h('small', { class: 'muted' }, 'waiting for the surface’s components…'),
      ctx.truncated ? h('small', { class: 'muted a2ui-truncated' }, `surface cut short: only its first ${MAX_NODES} components are drawn`) : null));
  }
  return out;
}
