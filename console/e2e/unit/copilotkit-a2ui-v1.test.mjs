// The CopilotKit example's A2UI v1.0 adapter (examples/copilotkit/src/a2ui/v1.js):
// v1.0 messages that mean the same in v0.9 are rewritten for the v0.9
// renderer; the rest are refused with the reason. The browser test
// copilotkit-a2ui-v1.0 draws the planner's surface through it.

import assert from 'node:assert/strict';
import { test } from 'node:test';

import { isV10, Refusal, toV09, V10_BASIC_CATALOG, v10Action } from '../../../examples/copilotkit/src/a2ui/v1.js';

const V09 = 'https://a2ui.org/specification/v0_9/basic_catalog.json';
const v10 = (kind, body) => ({ version: 'v1.0', [kind]: body });
const convert = (ops) => toV09(ops, { v09Catalog: V09 });
const refused = (ops, reason) => assert.throws(() => convert(ops), (err) => err instanceof Refusal && reason.test(err.message), `want a refusal matching ${reason}`);

// What the demo's planner sends (examples/agents/a2ui.go).
const planner = [
  v10('createSurface', { surfaceId: 'planner', catalogId: V10_BASIC_CATALOG }),
  v10('updateComponents', { surfaceId: 'planner', components: [
    { id: 'root', component: 'Column', children: ['title', 'note', 'confirm'] },
    { id: 'title', component: 'Text', text: 'Plan (A2UI v1.0)' },
    { id: 'note', component: 'TextField', label: 'Note', value: { path: '/note' } },
    { id: 'confirm', component: 'Button', child: 'confirm-label', variant: 'primary',
      action: { event: { name: 'confirm', context: { note: { path: '/note' } } } } },
    { id: 'confirm-label', component: 'Text', text: 'Confirm' },
  ] }),
  v10('updateDataModel', { surfaceId: 'planner', path: '/', value: { note: 'window seat' } }),
];

test('the planner\'s surface: the same messages as v0.9, in the v0.9 basic catalog', () => {
  assert.ok(isV10(planner));
  const out = convert(planner);
  assert.deepEqual(out.map((op) => op.version), ['v0.9', 'v0.9', 'v0.9']);
  assert.deepEqual(out[0], { version: 'v0.9', createSurface: { surfaceId: 'planner', catalogId: V09 } });
  assert.deepEqual(out[1].updateComponents, planner[1].updateComponents);
  assert.deepEqual(out[2].updateDataModel, planner[2].updateDataModel);
});

test('v0.9 operations are not v1.0', () => {
  assert.equal(isV10([{ version: 'v0.9', deleteSurface: { surfaceId: 's' } }]), false);
  assert.equal(isV10(undefined), false);
});

test('createSurface with inline components and data model: three v0.9 messages', () => {
  const out = convert([v10('createSurface', { surfaceId: 's', catalogId: V10_BASIC_CATALOG, sendDataModel: true,
    components: [{ id: 'root', component: 'Text', text: { path: '/t' }, catalogId: V10_BASIC_CATALOG }], dataModel: { t: 'hi' } })]);
  assert.deepEqual(out, [
    { version: 'v0.9', createSurface: { surfaceId: 's', catalogId: V09, sendDataModel: true } },
    { version: 'v0.9', updateComponents: { surfaceId: 's', components: [{ id: 'root', component: 'Text', text: { path: '/t' } }] } },
    { version: 'v0.9', updateDataModel: { surfaceId: 's', path: '/', value: { t: 'hi' } } },
  ]);
});

test('updateDataModel: v1.0\'s null value deletes, v0.9\'s absent value does', () => {
  assert.deepEqual(convert([v10('updateDataModel', { surfaceId: 's', path: '/x', value: null })]),
    [{ version: 'v0.9', updateDataModel: { surfaceId: 's', path: '/x' } }]);
  refused([v10('updateDataModel', { surfaceId: 's', path: '/x' })], /without a value/);
});

test('what v0.9 cannot carry is refused, with the reason', () => {
  const surface = (c) => [v10('createSurface', { surfaceId: 's', catalogId: V10_BASIC_CATALOG }), v10('updateComponents', { surfaceId: 's', components: [c] })];
  refused([v10('createSurface', { surfaceId: 's' })], /names no catalog/);
  refused([v10('createSurface', { surfaceId: 's', catalogId: 'https://example.com/mine.json' })], /not one this page draws/);
  refused([v10('createSurface', { surfaceId: 's', catalogId: V10_BASIC_CATALOG, metadata: { extensions: {} } })], /metadata/);
  refused([v10('callRendererFunction', { functionCallId: '1', callFunction: { call: 'openUrl', catalogId: V10_BASIC_CATALOG } })], /callRendererFunction/);
  refused([v10('agentFunctionResponse', { functionCallId: '1', value: 1 })], /agentFunctionResponse/);
  refused(surface({ id: 'root', component: 'Text', text: 'x', variant: 'h3' }), /Text variant "h3"/);
  refused(surface({ id: 'root', component: 'TextField', label: 'x', placeholder: 'y' }), /placeholder/);
  refused(surface({ id: 'root', component: 'TextField', label: 'x', checks: [{ condition: { path: '/ok' } }] }), /checks/);
  refused(surface({ id: 'root', component: 'Text', text: { call: 'formatString', args: { value: 'x' } } }), /function call "formatString"/);
  refused(surface({ id: 'root', component: 'Text', text: 'x', accessibility: { live: 'polite' } }), /accessibility.live/);
  refused(surface({ id: 'root', component: 'Text', text: 'x', metadata: {} }), /metadata/);
  refused(surface({ id: 'root', component: 'Text', text: 'x', catalogId: 'https://example.com/other.json' }), /catalog/);
  refused(surface({ id: 'b', component: 'Button', child: 'l', action: { event: { name: 'go', userMessage: 'Went' } } }), /userMessage/);
  refused(surface({ id: 'b', component: 'Button', child: 'l', action: { event: { name: 'go', context: { o: { a: 1 } } } } }), /literal object/);
  refused(surface({ id: 'b', component: 'Button', child: 'l', action: { functionCall: { call: 'openUrl' } } }), /only event actions/);
  refused(surface({ id: 'i', component: 'Icon', name: { svgPath: { path: '/p' } } }), /svgPath/);
  refused(surface({ id: 'x', component: 'Surface', child: 'root' }), /not in the basic catalog/);
  refused([{ version: 'v0.9', deleteSurface: { surfaceId: 's' } }], /version "v0.9" among v1.0/);
});

test('the user\'s action goes back in v1.0\'s shape', () => {
  const action = { name: 'confirm', surfaceId: 'planner', sourceComponentId: 'confirm', timestamp: '2026-12-06T05:00:00.000Z', context: { note: 'aisle' } };
  assert.deepEqual(v10Action(action), { version: 'v1.0', action });
  assert.deepEqual(v10Action({ ...action, context: undefined }).action.context, {});
});
