import { useCallback, useEffect, useState } from 'react';

// useRunError is the error a view shows beside the chat: the run's
// RUN_ERROR as the bridge sent it (its stable code and message), cleared
// when the next run starts, or — for failures without a RUN_ERROR (the
// runtime unreachable, an HTTP error), which reach only CopilotKit's error
// handler — what onChatError is given, unless a RUN_ERROR is shown already.
export function useRunError(agent) {
  const [error, setError] = useState(null);
  useEffect(() => {
    if (!agent) return undefined;
    const subscription = agent.subscribe({
      onRunStartedEvent: () => setError(null),
      onRunErrorEvent: ({ event }) => setError({ code: event.code ?? 'error', message: event.message }),
    });
    return () => subscription.unsubscribe();
  }, [agent]);
  const onChatError = useCallback(({ error: err, code }) => {
    setError((shown) => shown ?? { code: String(code ?? 'error'), message: err?.message ?? String(err) });
  }, []);
  return [error, setError, onChatError];
}
