import { useMemo, useRef } from 'react';
import { createA2UIMessageRenderer, useCopilotKit } from '@copilotkit/react-core/v2';
import { basicCatalog, viewerTheme } from '@copilotkit/a2ui-renderer';
import { isV10, Refusal, toV09, v10Action } from './v1.js';

// The page's renderer of a2ui-surface activities: CopilotKit's own
// (createA2UIMessageRenderer, @copilotkit/a2ui-renderer's basic catalog),
// with the A2UI v1.0 adapter of ./v1.js in front of it. A v0.9 surface
// goes through untouched; a v1.0 surface is drawn from its v0.9 rewriting,
// and its actions go back as {version: "v1.0", action}; a v1.0 surface the
// adapter refuses shows why instead. Given to <CopilotKit> in
// renderActivityMessages, it comes before the renderer CopilotKit adds for
// its `a2ui` prop, so it draws every surface.
function A2UISurface({ content, agent, ...rest }) {
  const { copilotkit } = useCopilotKit();
  const v10 = isV10(content?.a2ui_operations);
  // The action interceptor reads the current surface's version, agent and
  // core through this ref: CopilotKit's renderer is made once per surface.
  const current = useRef({});
  current.current = { v10, agent, copilotkit };

  const Inner = useMemo(
    () =>
      createA2UIMessageRenderer({
        catalog: basicCatalog,
        theme: viewerTheme, // what CopilotKit's own renderer draws with
        // CopilotKit forwards an action as {userAction}; a v1.0 surface's
        // goes as v1.0's {version, action}, as its agent reads it. null
        // tells CopilotKit the action was sent.
        onAction: async (action) => {
          const { v10: isV10Surface, agent: a, copilotkit: core } = current.current;
          if (!isV10Surface) return undefined;
          core.setProperties({ ...core.properties, a2uiAction: v10Action(action) });
          try {
            await core.runAgent({ agent: a });
          } finally {
            const { a2uiAction: _sent, ...props } = core.properties ?? {};
            core.setProperties(props);
          }
          return null;
        },
      }).render,
    [],
  );

  const adapted = useMemo(() => {
    if (!v10) return { content };
    try {
      return { content: { ...content, a2ui_operations: toV09(content.a2ui_operations, { v09Catalog: basicCatalog.id }) } };
    } catch (err) {
      if (err instanceof Refusal) return { refused: err.message };
      throw err;
    }
  }, [content, v10]);

  if (adapted.refused) {
    return (
      <div className="a2ui-refused" role="alert" data-a2ui-version="v1.0">
        <strong>This A2UI v1.0 surface cannot be drawn here</strong>
        <p>
          CopilotKit's renderer draws A2UI v0.9, and v0.9 cannot express: {adapted.refused}.
        </p>
      </div>
    );
  }
  return <Inner {...rest} agent={agent} content={adapted.content} />;
}

const inner = createA2UIMessageRenderer({ catalog: basicCatalog });

export const a2uiSurfaceRenderer = {
  activityType: 'a2ui-surface',
  // The content schema of CopilotKit's renderer (a2ui_operations and its
  // lifecycle fields, everything else passed through).
  content: inner.content,
  render: A2UISurface,
};
