// Server-Sent Events read from a fetch() body. EventSource cannot POST a run
// nor be told where to resume with a header, so the console reads the stream
// itself: one callback per frame, with the frame's id (the bridge's journal
// sequence number) when it has one.

// readSSE calls onFrame({id, event, data}) for every frame of body, in order,
// and resolves when the body ends. Comment lines (": keep-alive") are
// skipped; a frame's data lines are joined with "\n" as the SSE spec says.
export async function readSSE(body, onFrame) {
  const reader = body.pipeThrough(new TextDecoderStream()).getReader();
  let buf = '';
  let frame = { id: null, event: null, data: [] };
  const dispatch = () => {
    if (frame.data.length > 0) onFrame({ id: frame.id, event: frame.event, data: frame.data.join('\n') });
    frame = { id: null, event: null, data: [] };
  };
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buf += value;
      let nl;
      while ((nl = buf.indexOf('\n')) >= 0) {
        let line = buf.slice(0, nl);
        buf = buf.slice(nl + 1);
        if (line.endsWith('\r')) line = line.slice(0, -1);
        if (line === '') {
          dispatch();
          continue;
        }
        if (line[0] === ':') continue;
        const colon = line.indexOf(':');
        const field = colon < 0 ? line : line.slice(0, colon);
        let v = colon < 0 ? '' : line.slice(colon + 1);
        if (v[0] === ' ') v = v.slice(1);
        if (field === 'data') frame.data.push(v);
        else if (field === 'id') frame.id = v;
        else if (field === 'event') frame.event = v;
      }
    }
  } finally {
    reader.releaseLock();
  }
  // A stream cut mid-frame has no blank line after its last frame; such a
  // frame is incomplete by the spec's rules and is dropped, so the caller
  // resumes after the last id it did get.
}
