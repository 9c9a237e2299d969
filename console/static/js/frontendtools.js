// The console's frontend tool: what it offers agents in every run, how the
// page runs it, and what it shows of its effect.

// The console's own frontend tool, so agents that ask the page to do
// something (the demo's painter) can be tried here end to end.
export const FRONTEND_TOOLS = [
  {
    name: 'change_background',
    description: "Change the background colour of the console's conversation pane.",
    parameters: {
      type: 'object',
      properties: { color: { type: 'string', description: 'a CSS colour, e.g. "lightblue" or "#336699"' } },
      required: ['color'],
    },
  },
];

export const toolHandlers = {
  change_background(args) {
    const color = String(args?.color ?? '');
    if (!CSS.supports('color', color)) return { ok: false, error: `"${color}" is not a CSS colour` };
    return { ok: true, color };
  },
};

// applyBackground shows the last colour the change_background tool set.
export function applyBackground(pane, m) {
  let color = '';
  for (const it of m.items) {
    if (it.kind === 'tool' && it.name === 'change_background' && it.result) {
      try {
        const r = JSON.parse(it.result);
        if (r.ok) color = r.color;
      } catch {
        // not ours
      }
    }
  }
  // A tint of the colour, so text stays readable whatever the agent picked.
  pane.style.backgroundColor = color ? `color-mix(in srgb, ${color} 22%, var(--bg))` : '';
  if (color) pane.dataset.background = color;
  else delete pane.dataset.background;
}
