// A2UI v1.0 in front of a v0.9 renderer.
//
// @copilotkit/a2ui-renderer 1.74.0 (the newest) draws with @a2ui/web_core
// 0.10.4's v0.9 MessageProcessor, and no published renderer draws v1.0.
// That processor does not read the version field: it refuses a v1.0
// surface only because it knows no v1.0 catalog ("Catalog not found"), and
// given one it would read v1.0 messages with v0.9's meaning — ignore a
// createSurface's inline components, store a data model value null that
// v1.0 means as a deletion. v1.0 is v0.10 renamed; most of it is v0.9
// under a new version string. This module rewrites the v1.0 messages that
// mean the same in v0.9 and refuses, with the reason, every message that
// does not — so what the renderer draws is what the agent sent, or nothing
// and a visible refusal.
//
// What was compared (v0.9: @a2ui/web_core 0.10.4 src/v0_9/schemas; v1.0:
// @a2ui/web_core 0.11.0 src/v1_0/schemas and a2ui-project/a2ui
// specification/v1_0), and what this does with each difference:
//
//   envelope      version "v1.0" → "v0.9".
//   createSurface catalogId optional in v1.0: required here, and it must be
//                 a catalog this page announced (V10_BASIC_CATALOG), which
//                 is drawn with the v0.9 basic catalog. Its inline
//                 `components` and `dataModel` (new in v1.0) become the
//                 updateComponents and updateDataModel (path "/") that
//                 follow it. `metadata` (extensions): refused.
//   updateDataModel `value` required in v1.0, where null deletes; in v0.9
//                 an absent value deletes: null → absent.
//   callRendererFunction, agentFunctionResponse: new in v1.0, refused.
//   components    per-component `catalogId` must be the surface's;
//                 `metadata` refused; accessibility `live` and `hidden`
//                 (new) refused; `checks` refused (v1.0 conditions return a
//                 ValidationResult object, v0.9's a boolean); function
//                 calls (`call`) refused anywhere (every function of the
//                 basic catalog changed its definition); the v0.9 property
//                 set per component (below), and v1.0's additions to it
//                 (TextField.placeholder, Video.posterUrl, Slider.steps)
//                 refused; Text.variant caption|body only (v1.0 dropped
//                 h1–h5); Icon's svgPath a literal string (v0.9 takes no
//                 binding there).
//   action        event.userMessage (new) refused; a literal object in
//                 event.context (v1.0 DynamicValue only) refused;
//                 functionCall refused.
//
// The user's action goes back as {version: "v1.0", action: {...}}
// (renderer_to_agent.json; v0.9's action members are a subset of v1.0's).

// The v1.0 basic catalog: what this page announces for v1.0 (main.jsx,
// a2uiRendererCapabilities) and the only catalog it draws v1.0 surfaces in.
export const V10_BASIC_CATALOG = 'https://a2ui.org/specification/v1_0/catalogs/basic/catalog.json';

// The v0.9 basic catalog's properties per component (besides id, component,
// accessibility and weight), whose v1.0 definitions are the same.
const V09_PROPS = {
  Text: ['text', 'variant'],
  Image: ['url', 'description', 'fit', 'variant'],
  Icon: ['name'],
  Video: ['url'],
  AudioPlayer: ['url', 'description'],
  Row: ['children', 'justify', 'align'],
  Column: ['children', 'justify', 'align'],
  List: ['children', 'direction', 'align'],
  Card: ['child'],
  Tabs: ['tabs'],
  Modal: ['trigger', 'content'],
  Divider: ['axis'],
  Button: ['child', 'variant', 'action'],
  TextField: ['label', 'value', 'variant'],
  CheckBox: ['label', 'value'],
  ChoicePicker: ['label', 'variant', 'options', 'value', 'displayStyle', 'filterable'],
  Slider: ['label', 'min', 'max', 'value'],
  DateTimeInput: ['value', 'enableDate', 'enableTime', 'min', 'max', 'label'],
};
const COMMON_PROPS = ['id', 'component', 'accessibility', 'weight', 'catalogId'];
const V10_TEXT_VARIANTS = ['caption', 'body'];

// Refusal is the error toV09 throws: its message says which part of the
// v1.0 messages v0.9 cannot carry.
export class Refusal extends Error {}

function refuse(msg) {
  throw new Refusal(msg);
}

const isObject = (v) => v !== null && typeof v === 'object' && !Array.isArray(v);

// isV10 reports operations of A2UI v1.0 (any one marked "v1.0").
export function isV10(operations) {
  return Array.isArray(operations) && operations.some((op) => op?.version === 'v1.0');
}

// noCalls refuses a function call anywhere in a value.
function noCalls(value, where) {
  if (Array.isArray(value)) value.forEach((v) => noCalls(v, where));
  else if (isObject(value)) {
    if ('call' in value) refuse(`${where}: function call "${value.call}" (the v1.0 basic catalog's functions are not v0.9's)`);
    Object.values(value).forEach((v) => noCalls(v, where));
  }
}

function component(c, surfaceCatalog) {
  if (!isObject(c) || typeof c.id !== 'string') refuse('a component without an id');
  const where = `component "${c.id}"`;
  const props = V09_PROPS[c.component];
  if (!props) refuse(`${where}: component type ${JSON.stringify(c.component)} is not in the basic catalog`);
  if (c.catalogId !== undefined && c.catalogId !== surfaceCatalog) refuse(`${where}: catalog ${c.catalogId}`);
  for (const key of Object.keys(c)) {
    if (!COMMON_PROPS.includes(key) && !props.includes(key)) refuse(`${where} (${c.component}): property "${key}" has no v0.9 equivalent`);
  }
  if (c.accessibility !== undefined) {
    for (const key of Object.keys(c.accessibility ?? {})) {
      if (key !== 'label' && key !== 'description') refuse(`${where}: accessibility.${key} has no v0.9 equivalent`);
    }
  }
  if (c.component === 'Text' && c.variant !== undefined && !V10_TEXT_VARIANTS.includes(c.variant)) {
    refuse(`${where}: Text variant ${JSON.stringify(c.variant)} is not a v1.0 variant (caption, body)`);
  }
  if (c.component === 'Icon' && isObject(c.name) && 'svgPath' in c.name && typeof c.name.svgPath !== 'string') {
    refuse(`${where}: a bound Icon svgPath has no v0.9 equivalent`);
  }
  if (c.action !== undefined) {
    if (!isObject(c.action) || !isObject(c.action.event) || Object.keys(c.action).length !== 1) refuse(`${where}: only event actions are drawn`);
    const { name, context, ...rest } = c.action.event;
    if (Object.keys(rest).length > 0) refuse(`${where}: action event ${Object.keys(rest).join(', ')} has no v0.9 equivalent`);
    if (typeof name !== 'string') refuse(`${where}: an action without a name`);
    for (const [k, v] of Object.entries(context ?? {})) {
      if (isObject(v) && !(Object.keys(v).length === 1 && typeof v.path === 'string')) refuse(`${where}: action context "${k}" is a literal object, which v0.9 cannot carry`);
    }
  }
  noCalls(c, where);
  const { catalogId: _surfaceDefault, ...out } = c;
  return out;
}

// toV09 rewrites one surface activity's A2UI v1.0 operations as v0.9
// operations meaning the same, or throws a Refusal saying what v0.9 cannot
// carry. v10Catalog → v09Catalog is the one catalog it maps.
export function toV09(operations, { v10Catalog = V10_BASIC_CATALOG, v09Catalog }) {
  const out = [];
  const catalogs = new Map(); // surfaceId → its v1.0 catalogId
  const v09 = (kind, body) => ({ version: 'v0.9', [kind]: body });
  for (const op of operations) {
    if (!isObject(op) || op.version !== 'v1.0') refuse(`an operation of version ${JSON.stringify(op?.version)} among v1.0 ones`);
    const kinds = Object.keys(op).filter((k) => k !== 'version');
    if (kinds.length !== 1) refuse(`an operation with ${kinds.length} kinds (${kinds.join(', ')})`);
    const [kind] = kinds;
    const body = op[kind];
    if (!isObject(body) || typeof body.surfaceId !== 'string') {
      if (kind === 'callRendererFunction' || kind === 'agentFunctionResponse') refuse(`${kind}: v0.9 has no renderer or agent functions`);
      refuse(`${kind} without a surfaceId`);
    }
    const surface = body.surfaceId;
    const catalogOf = (id) => catalogs.get(id) ?? v10Catalog;
    switch (kind) {
      case 'createSurface': {
        const { surfaceId, catalogId, sendDataModel, components, dataModel, ...rest } = body;
        if (Object.keys(rest).length > 0) refuse(`createSurface "${surface}": ${Object.keys(rest).join(', ')} has no v0.9 equivalent`);
        if (catalogId === undefined) refuse(`createSurface "${surface}" names no catalog`);
        if (catalogId !== v10Catalog) refuse(`createSurface "${surface}": catalog ${catalogId} is not one this page draws (${v10Catalog})`);
        catalogs.set(surfaceId, catalogId);
        out.push(v09('createSurface', { surfaceId, catalogId: v09Catalog, ...(sendDataModel !== undefined && { sendDataModel }) }));
        if (components !== undefined) out.push(v09('updateComponents', { surfaceId, components: components.map((c) => component(c, catalogId)) }));
        if (dataModel !== undefined) out.push(v09('updateDataModel', { surfaceId, path: '/', value: dataModel }));
        break;
      }
      case 'updateComponents': {
        const { surfaceId, components, ...rest } = body;
        if (Object.keys(rest).length > 0) refuse(`updateComponents "${surface}": ${Object.keys(rest).join(', ')}`);
        if (!Array.isArray(components)) refuse(`updateComponents "${surface}" without a components list`);
        out.push(v09('updateComponents', { surfaceId, components: components.map((c) => component(c, catalogOf(surfaceId))) }));
        break;
      }
      case 'updateDataModel': {
        const { surfaceId, path, value, ...rest } = body;
        if (Object.keys(rest).length > 0) refuse(`updateDataModel "${surface}": ${Object.keys(rest).join(', ')}`);
        if (!('value' in body)) refuse(`updateDataModel "${surface}" without a value (v1.0 requires one; null deletes)`);
        out.push(v09('updateDataModel', { surfaceId, ...(path !== undefined && { path }), ...(value !== null && { value }) }));
        break;
      }
      case 'deleteSurface': {
        const { surfaceId, ...rest } = body;
        if (Object.keys(rest).length > 0) refuse(`deleteSurface "${surface}": ${Object.keys(rest).join(', ')}`);
        out.push(v09('deleteSurface', { surfaceId }));
        break;
      }
      default:
        refuse(`${kind}: no v0.9 equivalent`);
    }
  }
  return out;
}

// v10Action is the a2uiAction a v1.0 agent reads (renderer_to_agent.json)
// for an action CopilotKit's renderer reports ({name, surfaceId,
// sourceComponentId, timestamp, context}: the members v0.9 and v1.0 share).
export function v10Action(action) {
  const { name, surfaceId, sourceComponentId, timestamp, context } = action;
  return { version: 'v1.0', action: { name, surfaceId, sourceComponentId, timestamp, context: context ?? {} } };
}
