// Drawing the model. Everything the agent sends is put in the page as text
// (textContent), never as HTML, and links only with schemes a file can
// safely have: the console shows whatever a remote agent says.

import { renderSurfaces } from './a2ui.js';
import { surfaceOperations } from './model.js';

const SAFE_URL = /^(https?:|data:|blob:)/i;

// h builds an element: h('div', {class: 'x', onclick: fn}, child, 'text', …).
export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs ?? {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith('on')) el.addEventListener(k.slice(2), v);
    else if (k === 'class') el.className = v;
    else if (k === 'dataset') Object.assign(el.dataset, v);
    else if (v === true) el.setAttribute(k, '');
    else el.setAttribute(k, String(v));
  }
  for (const c of children.flat()) {
    if (c === undefined || c === null || c === false) continue;
    el.append(c instanceof Node ? c : String(c));
  }
  return el;
}

// inlineURL is u when the page may load it as an image: a data: or blob:
// URL, or one on the bridge (the Content-Security-Policy allows no other
// origin, so that an agent cannot make the console request arbitrary hosts).
export function inlineURL(u) {
  const href = safeURL(u);
  if (!href) return null;
  if (/^(data:|blob:)/i.test(href)) return href;
  try {
    return new URL(href, location.href).origin === location.origin ? href : null;
  } catch {
    return null;
  }
}

export function safeURL(u) {
  return typeof u === 'string' && SAFE_URL.test(u.trim()) ? u.trim() : null;
}

// pretty shows a JSON text indented, or as it is when it is not JSON.
export function pretty(text) {
  if (text == null) return '';
  if (typeof text !== 'string') return JSON.stringify(text, null, 2);
  try {
    return JSON.stringify(JSON.parse(text), null, 2);
  } catch {
    return text;
  }
}

export const shortId = (id) => (id && id.length > 12 ? `${id.slice(0, 8)}…` : id ?? '');

function formatSize(n) {
  if (typeof n !== 'number') return '';
  if (n < 1024) return `${n} B`;
  if (n < 1 << 20) return `${(n / 1024).toFixed(1)} KiB`;
  return `${(n / (1 << 20)).toFixed(1)} MiB`;
}

// fileBadge is the short type label drawn as a file's icon ("PDF", "TXT").
function fileBadge(name, mediaType) {
  const ext = /\.([a-z0-9]{1,4})$/i.exec(name)?.[1] ?? mediaType.split('/')[1]?.split(/[.+;-]/)[0] ?? 'file';
  return ext.slice(0, 4).toUpperCase();
}

// subagentBadge names the sub-agent an item is attributed to.
function subagentBadge(item, model) {
  if (!item.subagentRunId) return null;
  const name = model.subagents.get(item.subagentRunId)?.name ?? item.name ?? shortId(item.subagentRunId);
  return h('span', { class: 'badge subagent-badge', title: `sub-agent run ${item.subagentRunId}`, dataset: { subagentRunId: item.subagentRunId } }, name);
}

const RUN_END_TEXT = {
  finished: 'Run finished',
  interrupted: 'Waiting for your answer',
  cancelled: 'Run cancelled',
  error: 'Run failed',
};

function describeResume(entry, interrupt) {
  if (entry.status === 'cancelled') return 'Cancelled the request';
  const p = entry.payload;
  if (interrupt?.reason === 'tool_call' && p && typeof p === 'object') {
    if (p.approved === false) return 'Denied';
    return p.editedArgs ? `Approved with edits: ${JSON.stringify(p.editedArgs)}` : 'Approved';
  }
  if (p && typeof p === 'object' && !Array.isArray(p)) {
    return Object.entries(p).map(([k, v]) => `${k}: ${typeof v === 'string' ? v : JSON.stringify(v)}`).join(', ');
  }
  return typeof p === 'string' ? p : JSON.stringify(p);
}

function toolStatus(item, model) {
  if (item.open) return 'streaming arguments…';
  if (item.result != null) {
    // An approval the user refused still gets a result (what the bridge
    // sent the agent): name it for what it is.
    try {
      if (JSON.parse(item.result)?.approved === false) return 'denied';
    } catch {
      // a result that is not JSON
    }
    return item.resultBy === 'console' ? 'done on this page' : 'done';
  }
  if (model.interrupts.some((i) => i.toolCallId === item.id)) return 'awaiting approval';
  if (model.pendingToolCallIds.includes(item.id)) return 'for this page to run';
  return item.runId && model.activeRunId === item.runId ? 'running' : 'no result';
}

function renderItem(item, model, ctx) {
  const badge = subagentBadge(item, model);
  switch (item.kind) {
    case 'user':
      return h('article', { class: 'msg user', dataset: { kind: 'user', messageId: item.id } },
        h('header', {}, 'You'), h('div', { class: 'body' }, item.content ?? ''));
    case 'resume': {
      const byId = new Map((item.interrupts ?? []).map((i) => [i.id, i]));
      // Each answer names the team member it goes to.
      const to = (i) => (i?.subagentRunId ? h('span', { class: 'badge subagent-badge', dataset: { subagentRunId: i.subagentRunId } }, model.subagents.get(i.subagentRunId)?.name ?? i.metadata?.a2a?.agent ?? shortId(i.subagentRunId)) : null);
      return h('article', { class: 'msg user resume', dataset: { kind: 'resume' } },
        h('header', {}, 'You answered'),
        h('div', { class: 'body' }, item.entries.map((en) => h('div', {}, describeResume(en, byId.get(en.interruptId)), to(byId.get(en.interruptId))))));
    }
    case 'text':
      // A team member's message is headed by its badge alone: the badge
      // is the member's name, tied to its sub-agent run.
      return h('article', { class: `msg assistant${item.open ? ' streaming' : ''}`, dataset: { kind: 'text', messageId: item.id } },
        h('header', {}, badge && badge.textContent === item.name ? null : item.name || (item.role !== 'assistant' ? item.role : ctx.agentName) || 'Agent', badge),
        h('div', { class: 'body' }, item.content));
    case 'reasoning': {
      const d = h('details', { class: 'reasoning', dataset: { kind: 'reasoning', messageId: item.id }, open: ctx.isOpen(item.id, true) },
        h('summary', {}, item.open ? 'Thinking…' : 'Reasoning', badge),
        h('div', { class: 'body' }, item.content));
      d.addEventListener('toggle', () => ctx.setOpen(item.id, d.open));
      return d;
    }
    case 'tool': {
      const status = toolStatus(item, model);
      return h('article', { class: `tool ${item.execution}`, dataset: { kind: 'tool', toolCallId: item.id, toolName: item.name } },
        h('header', {},
          h('span', { class: 'tool-icon', 'aria-hidden': 'true' }, 'ƒ'),
          h('code', { class: 'tool-name' }, item.name || 'tool call'),
          h('span', { class: `chip ${item.execution}`, title: item.execution === 'server' ? 'the remote agent runs this tool' : 'the frontend runs this tool' },
            item.execution === 'server' ? 'server-executed' : 'frontend tool'),
          badge,
          h('span', { class: 'tool-status' }, status)),
        h('div', { class: 'tool-section' }, h('h4', {}, 'Arguments'), h('pre', { class: 'tool-args' }, pretty(item.args) || '—')),
        item.result != null
          ? h('div', { class: 'tool-section' }, h('h4', {}, 'Result'), h('pre', { class: 'tool-result' }, pretty(item.result)))
          : null);
    }
    case 'steps':
      return h('div', { class: 'steps', dataset: { kind: 'steps' } }, badge,
        item.steps.map((s) => h('span', { class: `step ${s.status}`, title: `step ${s.status}` }, s.name, s.status === 'done' ? ' ✓' : s.status === 'running' ? ' …' : ' ✕')));
    case 'file': {
      const f = item.file ?? {};
      const href = safeURL(f.url);
      const meta = [f.mediaType, formatSize(f.size)].filter(Boolean).join(' · ');
      const name = f.name || 'file';
      if (!href) {
        return h('div', { class: 'file', dataset: { kind: 'file' } }, badge, h('span', { class: 'file-name' }, name),
          h('span', { class: 'muted' }, ` ${meta}${f.omitted ? ` — not inlined: ${f.omitted}` : ''}`));
      }
      if (f.mediaType?.startsWith('image/') && inlineURL(href)) {
        return h('figure', { class: 'file image', dataset: { kind: 'file' } },
          h('img', { src: href, alt: name, loading: 'lazy' }),
          h('figcaption', {}, badge, h('a', { href, download: name, target: '_blank', rel: 'noopener noreferrer' }, name), meta ? ` · ${meta}` : ''));
      }
      return h('div', { class: 'file', dataset: { kind: 'file' } }, badge,
        h('span', { class: 'file-icon', 'aria-hidden': 'true' }, fileBadge(name, f.mediaType)),
        h('a', { href, download: name, target: '_blank', rel: 'noopener noreferrer' }, name), meta ? h('span', { class: 'muted' }, ` · ${meta}`) : null);
    }
    case 'activity':
      if (item.activityType === 'a2ui-surface') {
        item.local ??= new Map();
        return h('div', { class: 'activity a2ui', dataset: { kind: 'a2ui', messageId: item.id, ...(item.supersededBy && { superseded: 'true' }) } },
          badge,
          renderSurfaces(surfaceOperations(model, item), { onAction: ctx.onA2UIAction, inert: Boolean(item.supersededBy), local: item.local }));
      }
      if (item.activityType === 'a2a.status') {
        // The agent's progress notes (status texts an answer followed,
        // statusText auto), one line each, apart from the answer.
        const lines = String(item.content?.text ?? '').split('\n').filter((l) => l.trim() !== '');
        return h('div', { class: 'activity progress', dataset: { kind: 'progress' } },
          h('header', {}, 'Progress', item.content?.state ? ` · ${item.content.state}` : '', badge),
          h('ul', {}, lines.map((l) => h('li', {}, l))));
      }
      return h('div', { class: 'activity', dataset: { kind: 'activity' } },
        h('header', {}, item.activityType, badge), h('pre', {}, JSON.stringify(item.content, null, 2)));
    case 'a2ui-action': {
      const a = item.action?.userAction ?? item.action?.action ?? {};
      return h('article', { class: 'msg user resume', dataset: { kind: 'a2ui-action' } },
        h('header', {}, 'You acted on the surface'),
        h('div', { class: 'body' }, `${a.name ?? 'action'} on ${a.surfaceId ?? '?'}`, a.context && Object.keys(a.context).length ? h('code', {}, ` ${JSON.stringify(a.context)}`) : null));
    }
    case 'subagent': {
      const verb = { running: 'started', finished: 'finished', suspended: 'is waiting', error: 'failed' }[item.status] ?? item.status;
      return h('div', { class: `subagent ${item.status}`, dataset: { kind: 'subagent', subagentRunId: item.subagentRunId } },
        'Sub-agent ', h('strong', {}, item.name ?? shortId(item.subagentRunId)), ` ${verb}`,
        item.message ? `: ${item.message}` : '', item.code ? h('code', {}, ` ${item.code}`) : null);
    }
    case 'route': {
      const v = item.value ?? {};
      const score = typeof v.score === 'number' ? ` (score ${v.score.toFixed(2)})` : '';
      return h('div', { class: 'route', dataset: { kind: 'route' }, title: v.reason ?? '' }, badge,
        '→ routed to ', h('strong', {}, v.member ?? '?'), score, v.reason ? h('span', { class: 'muted' }, ` — ${v.reason}`) : null);
    }
    case 'run-end': {
      // A thread deleted while its run streamed (here or anywhere else).
      const text = item.code === 'thread_deleted' ? 'Thread deleted' : RUN_END_TEXT[item.status] ?? item.status;
      return h('div', { class: `run-end ${item.status}`, dataset: { kind: 'run-end', status: item.status } },
        h('span', {}, text),
        item.status === 'error' ? h('span', {}, ' — ', h('code', {}, item.code ?? 'error'), `: ${item.message ?? ''}`) : null);
    }
    default:
      return h('div', { class: 'muted' }, item.kind);
  }
}

// Timeline draws model.items into a container, redrawing an item only when
// its version changed and keeping the rest of the DOM (and the reader's
// scroll position) as it is.
export class Timeline {
  constructor(container, ctx) {
    this.container = container;
    this.ctx = ctx;
    this.nodes = new WeakMap(); // item → {node, v}
    this.openState = new Map(); // reasoning id → open, as the reader left it
    ctx.isOpen = (id, dflt) => this.openState.get(id) ?? dflt;
    ctx.setOpen = (id, open) => this.openState.set(id, open);
  }

  render(model) {
    const c = this.container;
    const nearBottom = c.scrollHeight - c.scrollTop - c.clientHeight < 80;
    let prev = null;
    for (const item of model.items) {
      let entry = this.nodes.get(item);
      if (!entry || entry.v !== item.v) {
        const node = renderItem(item, model, this.ctx);
        node.classList.add('item');
        if (entry?.node.parentNode === c) entry.node.replaceWith(node);
        entry = { node, v: item.v };
        this.nodes.set(item, entry);
      }
      const want = prev ? prev.nextSibling : c.firstChild;
      if (want !== entry.node) c.insertBefore(entry.node, want);
      prev = entry.node;
    }
    while (prev ? prev.nextSibling : c.firstChild) (prev ? prev.nextSibling : c.firstChild).remove();
    if (nearBottom) c.scrollTop = c.scrollHeight;
  }

  // refresh redraws every item (e.g. when an item's status depends on
  // something outside it, such as the pending interrupts).
  refresh(model) {
    this.nodes = new WeakMap();
    this.render(model);
  }
}

// renderJSON draws value as a collapsible tree; `collapsed` holds the JSON
// Pointers of the nodes the reader closed, so redraws keep them closed.
export function renderJSON(container, value, collapsed) {
  const leaf = (v) => {
    if (v === null) return h('span', { class: 'json-null' }, 'null');
    switch (typeof v) {
      case 'string':
        return h('span', { class: 'json-string' }, JSON.stringify(v));
      case 'number':
        return h('span', { class: 'json-number' }, String(v));
      case 'boolean':
        return h('span', { class: 'json-boolean' }, String(v));
      default:
        return h('span', {}, String(v));
    }
  };
  const node = (key, v, path) => {
    const label = key === null ? null : h('span', { class: 'json-key' }, `${key}: `);
    if (v !== null && typeof v === 'object') {
      const entries = Array.isArray(v) ? v.map((x, i) => [String(i), x]) : Object.entries(v);
      const summary = Array.isArray(v) ? `[${v.length}]` : `{${entries.length}}`;
      const d = h('details', { open: !collapsed.has(path), dataset: { path } },
        h('summary', {}, label, h('span', { class: 'json-summary' }, summary)),
        h('ul', {}, entries.map(([k, x]) => h('li', {}, node(k, x, `${path}/${k.replace(/~/g, '~0').replace(/\//g, '~1')}`)))));
      d.addEventListener('toggle', () => (d.open ? collapsed.delete(path) : collapsed.add(path)));
      return d;
    }
    return h('div', { class: 'json-leaf', dataset: { path } }, label, leaf(v));
  };
  container.replaceChildren(node(null, value, ''));
}

// renderDebugPanel draws the CUSTOM and RAW events and what the console
// could not apply, and the event log while it is open.
export function renderDebugPanel(m) {
  const $ = (id) => document.getElementById(id);
  const list = $('debug');
  list.replaceChildren(
    ...m.debug.map((d) =>
      h('li', { class: `debug-${d.kind}` },
        h('div', { class: 'debug-head' }, h('code', {}, d.seq ? `#${d.seq}` : '—'), ' ', h('strong', {}, d.name), h('span', { class: 'muted' }, ` ${d.kind}`)),
        h('pre', {}, JSON.stringify(d.value, null, 2)))),
  );
  $('debug-empty').hidden = m.debug.length > 0;
  $('debug-count').textContent = m.debug.length ? `(${m.debug.length})` : '';
  $('event-count').textContent = String(m.events.length);
  // The event log is only drawn while it is open: a long run would
  // otherwise rebuild hundreds of rows every frame for nobody.
  if ($('event-log').open) {
    const events = m.events.slice(-500);
    $('events').replaceChildren(...events.map((e) => h('li', {}, h('code', {}, e.seq ? `#${e.seq}` : '—'), ` ${e.type}`)));
  }
}
