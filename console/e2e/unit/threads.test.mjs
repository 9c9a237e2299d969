// The console's thread list (threads.js: the bridge's pages read, collected
// and appended, bounded) and what it still keeps in localStorage (store.js:
// records of sent runs, bounded, forgotten on delete, the legacy list
// dropped). The browser test console-threads-server covers the page itself.

import assert from 'node:assert/strict';
import { test } from 'node:test';

import { MAX_LISTED, PAGE, append, collect, label, parsePage } from '../../static/js/threads.js';

// A Storage in memory, as the page's localStorage and sessionStorage are.
class MemoryStorage {
  constructor() {
    this.m = new Map();
  }
  getItem(k) {
    return this.m.has(k) ? this.m.get(k) : null;
  }
  setItem(k, v) {
    this.m.set(k, String(v));
  }
  removeItem(k) {
    this.m.delete(k);
  }
  keys() {
    return [...this.m.keys()];
  }
}
globalThis.localStorage = new MemoryStorage();
globalThis.sessionStorage = new MemoryStorage();
const store = await import('../../static/js/store.js');

const entry = (i, extra = {}) => ({
  agent: 'streamer', threadId: `t${i}`, createdAt: '2026-12-06T10:00:00Z', lastActivityAt: '2026-12-06T11:00:00Z',
  status: 'idle', title: `question ${i}`, messageCount: 2, ...extra,
});

test('a page is read defensively: entries without a thread id dropped, odd fields defaulted, no cursor at the end', () => {
  const page = parsePage({
    threads: [entry(1), null, { title: 'no id' }, entry(2, { status: 'exploded', messageCount: -3, lastActivityAt: 'soon', title: 7 }), { threadId: '__proto__' }],
  });
  assert.deepEqual(page.threads.map((t) => t.threadId), ['t1', 't2', '__proto__']);
  assert.equal(page.nextCursor, null);
  const odd = page.threads[1];
  assert.equal(odd.status, 'idle');
  assert.equal(odd.messageCount, null);
  assert.equal(odd.title, '');
  assert.equal(odd.lastActivityAt, Date.parse('2026-12-06T10:00:00Z'), 'an unreadable last activity falls back to createdAt');
  assert.equal(({}).threadId, undefined);
  assert.deepEqual(parsePage({ threads: [], nextCursor: 'c2' }), { threads: [], nextCursor: 'c2' });
  assert.deepEqual(parsePage('not an object'), { threads: [], nextCursor: null });
});

// pages serves `total` threads PAGE at a time, with numeric cursors.
function pages(total, calls = []) {
  return async (cursor) => {
    calls.push(cursor);
    const from = cursor ? Number(cursor) : 0;
    const threads = [];
    for (let i = from; i < Math.min(from + PAGE, total); i++) threads.push(parsePage({ threads: [entry(i)] }).threads[0]);
    return { threads, nextCursor: from + PAGE < total ? String(from + PAGE) : null };
  };
}

test('collect reads from the start up to what the list showed, then keeps the cursor', async () => {
  const calls = [];
  const got = await collect(pages(3 * PAGE + 5, calls), PAGE + 1);
  assert.deepEqual(calls, [null, String(PAGE)]);
  assert.equal(got.threads.length, 2 * PAGE);
  assert.equal(got.nextCursor, String(2 * PAGE));
  const all = await collect(pages(7), PAGE);
  assert.equal(all.threads.length, 7);
  assert.equal(all.nextCursor, null);
});

test('collect and append never hold more than MAX_LISTED threads, nor one twice', async () => {
  const got = await collect(pages(MAX_LISTED + 3 * PAGE), 10 * MAX_LISTED);
  assert.equal(got.threads.length, MAX_LISTED);
  assert.equal(got.nextCursor, null, 'no "More" past the bound');
  const first = await collect(pages(2 * PAGE), PAGE);
  const next = await pages(2 * PAGE)(first.nextCursor);
  const both = append(first.threads, { threads: [first.threads[0], ...next.threads], nextCursor: null });
  assert.equal(both.threads.length, 2 * PAGE);
  assert.equal(new Set(both.threads.map((t) => t.threadId)).size, 2 * PAGE);
});

test('a thread without a title is labelled by the start of its id', () => {
  assert.equal(label(parsePage({ threads: [entry(1, { title: '  ' , threadId: 'thread-0123456789abcdef' })] }).threads[0]), 'thread-0…');
  assert.equal(label(parsePage({ threads: [entry(1)] }).threads[0]), 'question 1');
});

test('records of sent runs are bounded, and forgotten with their thread', () => {
  const runsKeys = () => localStorage.keys().filter((k) => k.startsWith('a2a-console:runs:'));
  for (let i = 0; i < store.MAX_RECORDED_THREADS + 20; i++) store.rememberRun('streamer', `t${i}`, 'r1', { user: [{ id: 'u', role: 'user', content: `hi ${i}` }] });
  assert.equal(runsKeys().length, store.MAX_RECORDED_THREADS);
  assert.equal(Object.keys(store.runs('streamer', 't0')).length, 0, 'the least recently used record went first');
  const last = `t${store.MAX_RECORDED_THREADS + 19}`;
  assert.equal(store.runs('streamer', last).r1.user[0].content, `hi ${store.MAX_RECORDED_THREADS + 19}`);
  store.forgetThread('streamer', last);
  assert.equal(Object.keys(store.runs('streamer', last)).length, 0);
  assert.equal(runsKeys().length, store.MAX_RECORDED_THREADS - 1);
});

test('a stored record cannot reach Object.prototype', () => {
  localStorage.setItem('a2a-console:runs:streamer:evil', '{"__proto__":{"polluted":true},"r1":{"user":[]},"r2":"not a record"}');
  const got = store.runs('streamer', 'evil');
  assert.equal(({}).polluted, undefined);
  assert.deepEqual(Object.keys(got).sort(), ['__proto__', 'r1']);
  assert.equal(got.r2, undefined);
});

test('the thread list older consoles kept is dropped; its records join the bounded ones', () => {
  localStorage.setItem('a2a-console:threads', JSON.stringify({ streamer: [{ id: 'old1', title: 'x' }], counter: 'junk' }));
  localStorage.setItem('a2a-console:runs:streamer:old1', '{"r1":{"user":[]}}');
  store.dropLegacy();
  assert.equal(localStorage.getItem('a2a-console:threads'), null);
  const recorded = JSON.parse(localStorage.getItem('a2a-console:recorded'));
  assert.ok(recorded.length <= store.MAX_RECORDED_THREADS);
  assert.ok(localStorage.getItem('a2a-console:runs:streamer:old1') === null || recorded.some(([a, t]) => a === 'streamer' && t === 'old1'),
    'a legacy record is either dropped by the bound or under it');
});

test('the last agent is remembered across tabs', () => {
  assert.equal(store.lastAgent(), '');
  store.saveLastAgent('counter');
  assert.equal(store.lastAgent(), 'counter');
});
