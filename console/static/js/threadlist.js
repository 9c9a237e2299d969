// The thread panel: the caller's threads with the selected agent, from the
// bridge (GET /agents/{name}/threads), a "More threads" button while the
// bridge has more (nextCursor), and a Delete action per thread that asks
// first, inline, in the row itself (a native confirm() would block the page
// and its streams). Every text in it is the bridge's or an agent's words and
// goes in as text, never as HTML.

import * as api from './api.js';
import * as store from './store.js';
import { h } from './render.js';
import { PAGE, append, collect, label, parsePage, relativeTime } from './threads.js';

const STATUS_TEXT = { running: 'running', interrupted: 'waiting for you' };

export class ThreadList {
  // els: {list, empty, more}; on: {open(threadId), deleted(threadId)}.
  constructor(els, on) {
    this.els = els;
    this.on = on;
    this.agent = null;
    this.current = null; // the thread open in the page
    this.threads = [];
    this.nextCursor = null;
    this.error = '';
    this.loading = false;
    this.confirming = null; // the thread whose Delete asks for confirmation
    this.deleting = null;
    this.rowError = null; // {threadId, message}: a delete that failed
    this.token = 0; // bumped per agent: late answers for another are dropped
    this.refreshing = null; // the refresh in flight
    this.again = false; // a refresh was asked for while one was in flight
    els.more.addEventListener('click', () => this.loadMore());
  }

  // setAgent shows the agent's threads, from the bridge's first page.
  setAgent(agent) {
    this.agent = agent;
    this.token++;
    Object.assign(this, { threads: [], nextCursor: null, error: '', confirming: null, deleting: null, rowError: null, refreshing: null, again: false });
    this.render();
    if (agent) this.refresh();
  }

  setCurrent(threadId) {
    this.current = threadId;
    this.render();
  }

  has(threadId) {
    return this.threads.some((t) => t.threadId === threadId);
  }

  // refresh reads the list again from its start, as many threads as it
  // shows (at least a page): a new run moved a thread to the top, a delete
  // elsewhere removed one. Calls while one is in flight fold into one more.
  refresh() {
    if (!this.agent) return Promise.resolve();
    if (this.refreshing) {
      this.again = true;
      return this.refreshing;
    }
    const token = this.token;
    const agent = this.agent;
    this.loading = true;
    this.render();
    const fetchPage = async (cursor) => parsePage(await api.listThreads(agent, { limit: PAGE, cursor }));
    this.refreshing = (async () => {
      try {
        const got = await collect(fetchPage, Math.max(PAGE, this.threads.length));
        if (token !== this.token) return;
        Object.assign(this, got, { error: '' });
      } catch (err) {
        if (token === this.token) this.error = `Could not list the threads: ${err.message}`;
      } finally {
        if (token === this.token) {
          this.loading = false;
          this.refreshing = null;
          this.render();
          if (this.again) {
            this.again = false;
            this.refresh();
          }
        }
      }
    })();
    return this.refreshing;
  }

  // loadMore appends the next page.
  async loadMore() {
    if (!this.nextCursor || this.loading) return;
    const token = this.token;
    this.loading = true;
    this.render();
    try {
      const page = parsePage(await api.listThreads(this.agent, { limit: PAGE, cursor: this.nextCursor }));
      if (token !== this.token) return;
      Object.assign(this, append(this.threads, page), { error: '' });
    } catch (err) {
      // The button stays: pressing it again tries again.
      if (token === this.token) this.error = `Could not list more threads: ${err.message}`;
    } finally {
      if (token === this.token) {
        this.loading = false;
        this.render();
      }
    }
  }

  // remove drops a thread from the list at once (it was deleted here, or a
  // stream said it was deleted elsewhere), then reads the list again.
  remove(threadId) {
    this.threads = this.threads.filter((t) => t.threadId !== threadId);
    if (this.confirming === threadId) this.confirming = null;
    this.render();
    this.refresh();
  }

  async confirmDelete(threadId) {
    const token = this.token;
    const agent = this.agent;
    this.deleting = threadId;
    this.rowError = null;
    this.render();
    try {
      await api.deleteThread(agent, threadId);
    } catch (err) {
      if (token === this.token) {
        this.deleting = null;
        this.rowError = { threadId, message: `Could not delete: ${err.message}` };
        this.render();
      }
      return;
    }
    store.forgetThread(agent, threadId);
    if (token !== this.token) return;
    this.deleting = null;
    this.confirming = null;
    this.on.deleted(threadId);
    this.remove(threadId);
  }

  render() {
    const { list, empty, more } = this.els;
    // Redrawing keeps the keyboard focus on the same button of the same row.
    const a = list.contains(document.activeElement) ? document.activeElement : null;
    const focused = a && { thread: a.closest('li')?.dataset.thread, className: a.className, text: a.textContent };
    list.replaceChildren(...this.threads.map((t) => this.row(t)));
    if (focused) {
      [...list.querySelectorAll('button')]
        .find((b) => b.closest('li')?.dataset.thread === focused.thread && b.className === focused.className && b.textContent === focused.text)
        ?.focus({ preventScroll: true });
    }
    let note = '';
    if (!this.agent) note = '';
    else if (this.error) note = this.error;
    else if (this.threads.length === 0) note = this.loading ? 'Loading the threads…' : 'No threads with this agent yet.';
    empty.textContent = note;
    empty.hidden = note === '';
    empty.classList.toggle('error-text', Boolean(this.error));
    more.hidden = !this.nextCursor;
    more.disabled = this.loading;
  }

  row(t) {
    const id = t.threadId;
    const title = label(t);
    if (this.confirming === id) {
      const busy = this.deleting === id;
      const keep = h('button', { type: 'button', disabled: busy, onclick: () => this.cancelConfirm() }, 'Keep');
      const li = h('li', { class: 'thread-row confirming', dataset: { thread: id } },
        h('div', { class: 'thread-confirm', role: 'group', 'aria-label': `Delete ${title}?` },
          h('p', { class: 'small' }, 'Delete “', h('strong', {}, title), '” for good? Its messages, state and journal are removed on the bridge.'),
          this.rowError?.threadId === id ? h('p', { class: 'small error-text', role: 'alert' }, this.rowError.message) : null,
          h('div', { class: 'thread-confirm-bar' },
            keep,
            h('button', { type: 'button', class: 'danger', disabled: busy, onclick: () => this.confirmDelete(id) }, busy ? 'Deleting…' : 'Delete for good'))));
      li.addEventListener('keydown', (ev) => {
        if (ev.key === 'Escape') this.cancelConfirm();
      });
      return li;
    }
    const status = STATUS_TEXT[t.status];
    const meta = [
      t.messageCount == null ? null : `${t.messageCount} message${t.messageCount === 1 ? '' : 's'}`,
      status,
    ].filter(Boolean).join(' · ');
    return h('li', { class: 'thread-row', dataset: { thread: id } },
      h('button', { type: 'button', class: 'thread', 'aria-current': id === this.current ? 'true' : 'false', dataset: { thread: id, status: t.status }, onclick: () => this.on.open(id) },
        h('span', { class: 'thread-title' }, title),
        h('span', { class: 'thread-meta' },
          t.lastActivityAt == null ? null : h('time', { datetime: new Date(t.lastActivityAt).toISOString(), title: new Date(t.lastActivityAt).toLocaleString() }, relativeTime(t.lastActivityAt)),
          meta ? h('span', {}, ` · ${meta}`) : null)),
      h('button', { type: 'button', class: 'thread-delete ghost', 'aria-label': `Delete ${title}`, title: 'Delete this thread', onclick: () => this.askDelete(id) }, '✕'));
  }

  askDelete(threadId) {
    this.confirming = threadId;
    this.rowError = null;
    this.render();
    // The safe choice takes the focus: Enter or Space keeps the thread.
    this.els.list.querySelector(`li.confirming button`)?.focus();
  }

  cancelConfirm() {
    const id = this.confirming;
    this.confirming = null;
    this.rowError = null;
    this.render();
    [...this.els.list.querySelectorAll('button.thread-delete')].find((b) => b.closest('li')?.dataset.thread === id)?.focus();
  }
}
