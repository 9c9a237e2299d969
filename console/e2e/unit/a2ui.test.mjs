// The console's A2UI fold (a2ui.js buildSurfaces, and model.js for
// activities and CUSTOM a2ui events): surfaces of both published message
// sets, data bindings, deletes, and a surface an agent continues in a later
// run. The browser tests render and submit real surfaces.

import assert from 'node:assert/strict';
import { test } from 'node:test';

import { buildSurfaces } from '../../static/js/a2ui.js';
import { fold, surfaceOperations } from '../../static/js/model.js';

test('v0.8: components, data model contents at a path, beginRendering', () => {
  const s = buildSurfaces([
    { surfaceUpdate: { surfaceId: 'b', components: [{ id: 'root', component: { Text: { text: { path: '/booking/name' } } } }] } },
    { dataModelUpdate: { surfaceId: 'b', path: '/booking', contents: [{ key: 'name', valueString: 'Ada' }, { key: 'guests', valueNumber: 2 },
      { key: 'opts', valueMap: [{ key: 'terrace', valueBoolean: true }] }] } },
    { beginRendering: { surfaceId: 'b', root: 'root' } },
  ]).get('b');
  assert.equal(s.version, 'v0.8');
  assert.equal(s.ready, true);
  assert.deepEqual(s.data, { booking: { name: 'Ada', guests: 2, opts: { terrace: true } } });
  assert.equal(s.components.get('root').kind, 'Text');
});

test('v0.9: createSurface, flat components, updateDataModel set and removed, deleteSurface', () => {
  const ops = [
    { version: 'v0.9', createSurface: { surfaceId: 'd', catalogId: 'c' } },
    { version: 'v0.9', updateComponents: { surfaceId: 'd', components: [{ id: 'root', component: 'Text', text: { path: '/cpu' } }] } },
    { version: 'v0.9', updateDataModel: { surfaceId: 'd', path: '/', value: { cpu: '1%', mem: 'x' } } },
    { version: 'v0.9', updateDataModel: { surfaceId: 'd', path: '/cpu', value: '2%' } },
    { version: 'v0.9', updateDataModel: { surfaceId: 'd', path: '/mem' } },
  ];
  const s = buildSurfaces(ops).get('d');
  assert.equal(s.ready, true);
  assert.deepEqual(s.data, { cpu: '2%' });
  assert.deepEqual(s.components.get('root').props, { text: { path: '/cpu' } });
  assert.equal(buildSurfaces([...ops, { version: 'v0.9', deleteSurface: { surfaceId: 'd' } }]).get('d').deleted, true);
});

test('a surface continued in a later run renders from all its operations; only the latest acts', () => {
  const env = (seq, event) => ({ seq, event });
  const m = fold([
    env(1, { type: 'RUN_STARTED', runId: 'r1' }),
    env(2, { type: 'ACTIVITY_SNAPSHOT', messageId: 'a1', activityType: 'a2ui-surface', content: { operations: [
      { version: 'v0.9', createSurface: { surfaceId: 'w', catalogId: 'c' } },
      { version: 'v0.9', updateComponents: { surfaceId: 'w', components: [{ id: 'root', component: 'Text', text: 'one' }] } }] } }),
    env(3, { type: 'ACTIVITY_DELTA', messageId: 'a1', activityType: 'a2ui-surface', patch: [
      { op: 'add', path: '/operations/-', value: { version: 'v0.9', updateDataModel: { surfaceId: 'w', path: '/x', value: 1 } } }] }),
    env(4, { type: 'RUN_FINISHED', runId: 'r1' }),
    env(5, { type: 'RUN_STARTED', runId: 'r2' }),
    // A client before 1.0 gets the same operations as CUSTOM a2ui.
    env(6, { type: 'CUSTOM', name: 'a2ui', value: { activityId: 'a2', surfaceId: 'w', operations: [
      { version: 'v0.9', updateComponents: { surfaceId: 'w', components: [{ id: 'root', component: 'Text', text: 'two' }] } }] } }),
    env(7, { type: 'RUN_FINISHED', runId: 'r2' }),
  ]);
  const [first, second] = m.items.filter((it) => it.activityType === 'a2ui-surface');
  assert.equal(first.supersededBy, 'a2');
  assert.equal(second.supersededBy, undefined);
  const s = buildSurfaces(surfaceOperations(m, second)).get('w');
  assert.equal(s.ready, true);
  assert.equal(s.components.get('root').props.text, 'two');
  assert.deepEqual(s.data, { x: 1 });
});

test('a data model path or key naming a prototype changes nothing outside the surface (issue 33 item 3)', () => {
  const s = buildSurfaces([
    { dataModelUpdate: { surfaceId: 'p8', path: '/__proto__', contents: [{ key: 'method', valueString: 'PUT' }] } },
    { dataModelUpdate: { surfaceId: 'p8', path: '/', contents: [{ key: '__proto__', valueMap: [{ key: 'polluted8', valueBoolean: true }] },
      { key: 'ok', valueString: 'kept' }] } },
    { version: 'v0.9', updateDataModel: { surfaceId: 'p9', path: '/__proto__/polluted9', value: true } },
    { version: 'v0.9', updateDataModel: { surfaceId: 'p9', path: '/constructor/prototype/polluted10', value: true } },
    { version: 'v0.9', updateDataModel: { surfaceId: 'p9', path: '/a/__proto__/polluted11', value: true } },
    { version: 'v0.9', updateDataModel: { surfaceId: 'p9', path: '/b', value: 1 } },
  ]);
  for (const k of ['method', 'polluted8', 'polluted9', 'polluted10', 'polluted11']) {
    assert.equal(({})[k], undefined, `Object.prototype.${k} was set`);
  }
  assert.deepEqual(s.get('p8').data, { ok: 'kept' });
  assert.equal(Object.getPrototypeOf(s.get('p8').data), Object.prototype);
  assert.deepEqual(s.get('p9').data, { b: 1 });
});
