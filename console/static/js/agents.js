// The agents panel and the picked agent's heading, from GET /agents and
// GET /agents/{name}. Names and descriptions are the agents' words: text only.

import { h } from './render.js';

// isTeam: GET /agents and GET /agents/{name} describe a team with its
// `team` ({strategy, members}) and the identity type "a2a-team".
export const isTeam = (a) => Boolean(a?.team) || a?.capabilities?.identity?.type === 'a2a-team';

// renderAgentList draws the agents matching `filter`, `selected` pressed;
// a click calls onSelect(name).
export function renderAgentList(list, agents, filterText, selected, onSelect) {
  const filter = filterText.trim().toLowerCase();
  list.replaceChildren(
    ...agents
      .filter((a) => !filter || a.name.toLowerCase().includes(filter) || (a.description ?? '').toLowerCase().includes(filter))
      .map((a) => {
        const team = isTeam(a);
        const members = (a.capabilities?.multiAgent?.subagents ?? []).map((s) => (typeof s === 'string' ? s : s.name)).filter(Boolean);
        const health = a.health?.status ?? 'unknown';
        return h('li', {},
          h('button', { type: 'button', class: 'agent', 'aria-pressed': String(a.name === selected), dataset: { agent: a.name }, onclick: () => onSelect(a.name) },
            h('span', { class: 'agent-name' }, h('span', { class: `health ${health}`, title: `health: ${health}${a.health?.error ? ` (${a.health.error})` : ''}`, 'aria-hidden': 'true' }), a.name,
              health === 'ok' ? null : h('span', { class: 'visually-hidden' }, ` (${health})`),
              team ? h('span', { class: 'badge team' }, 'team') : null),
            a.description ? h('span', { class: 'agent-desc' }, a.description) : null,
            team && members.length ? h('span', { class: 'agent-members' }, `members: ${members.join(', ')}`) : null));
      }),
  );
}

// renderAgentHeading draws the picked agent's name, description and what
// tells it apart.
export function renderAgentHeading(el, info) {
  if (!info) {
    el.replaceChildren();
    return;
  }
  // What tells this agent apart: its binding, whether it streams, its
  // skills (the bridge's AG-UI capabilities are the same for every agent).
  const caps = info.capabilities ?? {};
  const chips = [
    info.health?.binding,
    caps.a2a?.streaming === false ? 'no streaming' : caps.a2a?.streaming ? 'streaming' : null,
    isTeam(info) ? `team of ${(caps.multiAgent?.subagents ?? []).length}${info.team?.strategy ? ` · ${info.team.strategy}` : ''}` : null,
    ...(info.skills ?? []).map((sk) => `skill: ${sk.name || sk.id}`),
  ].filter(Boolean);
  el.replaceChildren(
    h('h2', {}, info.name),
    info.description ? h('p', { class: 'muted' }, info.description) : null,
    h('ul', { class: 'chips', 'aria-label': 'capabilities' }, chips.map((c) => h('li', { class: 'chip' }, c))),
  );
}
