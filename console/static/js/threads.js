// The thread list, as the bridge gives it: GET /agents/{name}/threads pages
// through the caller's own threads, newest activity first. Nothing here
// touches the page, so node --test checks it (console/e2e/unit).

// PAGE is how many threads one request asks for; MAX_LISTED bounds how many
// the list holds however often "More" is pressed (a refresh pages through
// again up to what was shown, so it is bounded too).
export const PAGE = 20;
export const MAX_LISTED = 500;

const STATUSES = new Set(['idle', 'running', 'interrupted']);

// thread keeps what the console uses of one entry of the bridge's answer, as
// plain values of the expected types; an entry without a string threadId is
// dropped (a proxy's or a foreign server's answer must not break the list).
function thread(t) {
  if (!t || typeof t !== 'object' || typeof t.threadId !== 'string' || t.threadId === '') return null;
  const time = (v) => {
    const ms = typeof v === 'string' ? Date.parse(v) : NaN;
    return Number.isFinite(ms) ? ms : null;
  };
  return {
    threadId: t.threadId,
    agent: typeof t.agent === 'string' ? t.agent : '',
    title: typeof t.title === 'string' ? t.title : '',
    status: STATUSES.has(t.status) ? t.status : 'idle',
    messageCount: Number.isInteger(t.messageCount) && t.messageCount >= 0 ? t.messageCount : null,
    createdAt: time(t.createdAt),
    lastActivityAt: time(t.lastActivityAt) ?? time(t.createdAt),
  };
}

// parsePage reads one answer {threads: […], nextCursor?} into
// {threads, nextCursor}; nextCursor is null at the end.
export function parsePage(body) {
  const list = Array.isArray(body?.threads) ? body.threads : [];
  const threads = list.map(thread).filter(Boolean);
  const nextCursor = typeof body?.nextCursor === 'string' && body.nextCursor !== '' ? body.nextCursor : null;
  return { threads, nextCursor };
}

// collect pages from the start (fetchPage(cursor) → {threads, nextCursor})
// until it holds at least `want` threads or the bridge has no more, never
// more than MAX_LISTED. A thread seen twice (it moved to the top between two
// pages) is kept once, where it was first seen.
export async function collect(fetchPage, want = PAGE) {
  want = Math.min(Math.max(want, 1), MAX_LISTED);
  const seen = new Set();
  const threads = [];
  let cursor = null;
  for (;;) {
    const page = await fetchPage(cursor);
    for (const t of page.threads) {
      if (seen.has(t.threadId) || threads.length >= MAX_LISTED) continue;
      seen.add(t.threadId);
      threads.push(t);
    }
    cursor = page.nextCursor;
    if (!cursor || threads.length >= want) return { threads, nextCursor: threads.length >= MAX_LISTED ? null : cursor };
  }
}

// append adds the next page to a list, skipping threads it already shows.
export function append(list, page) {
  const have = new Set(list.map((t) => t.threadId));
  const threads = [...list, ...page.threads.filter((t) => !have.has(t.threadId))].slice(0, MAX_LISTED);
  return { threads, nextCursor: threads.length >= MAX_LISTED ? null : page.nextCursor };
}

// label is what the list shows for a thread: its title (the bridge's cut of
// the first user message) or, without one, the start of its id.
export function label(t) {
  const title = t.title.trim();
  if (title) return title;
  return t.threadId.length > 12 ? `${t.threadId.slice(0, 8)}…` : t.threadId;
}

// relativeTime says how long ago ms was, as the list shows it.
export function relativeTime(ms, now = Date.now()) {
  if (ms == null) return '';
  const s = Math.round((now - ms) / 1000);
  if (s < 60) return 'just now';
  if (s < 3600) return `${Math.round(s / 60)} min ago`;
  if (s < 86400) return `${Math.round(s / 3600)} h ago`;
  return new Date(ms).toLocaleDateString();
}

// uuid works on plain http too, where crypto.randomUUID is missing (a
// bridge reached by a LAN address is not a secure context).
export function uuid() {
  const b = crypto.getRandomValues(new Uint8Array(16));
  b[6] = (b[6] & 0x0f) | 0x40;
  b[8] = (b[8] & 0x3f) | 0x80;
  const x = [...b].map((n) => n.toString(16).padStart(2, '0')).join('');
  return `${x.slice(0, 8)}-${x.slice(8, 12)}-${x.slice(12, 16)}-${x.slice(16, 20)}-${x.slice(20)}`;
}
