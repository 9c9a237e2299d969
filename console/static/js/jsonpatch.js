// RFC 6902 JSON Patch, applied the way AG-UI clients apply STATE_DELTA and
// ACTIVITY_DELTA: in order, all or nothing, on a copy (a patch that does not
// apply leaves the document as it was, and the caller reports it).

export class PatchError extends Error {
  constructor(message, index) {
    super(index === undefined ? message : `operation ${index}: ${message}`);
    this.name = 'PatchError';
  }
}

// parsePointer splits an RFC 6901 JSON Pointer into its unescaped tokens.
export function parsePointer(pointer) {
  if (typeof pointer !== 'string') throw new PatchError('a path must be a string');
  if (pointer === '') return [];
  if (pointer[0] !== '/') throw new PatchError(`"${pointer}" is not a JSON Pointer (must start with "/")`);
  // ~1 before ~0, as RFC 6901 §4 says: "~01" is "~1", not "/".
  return pointer.slice(1).split('/').map((t) => t.replace(/~1/g, '/').replace(/~0/g, '~'));
}

const isContainer = (v) => v !== null && typeof v === 'object';
const own = (obj, key) => Object.prototype.hasOwnProperty.call(obj, key);

// arrayIndex reads an array index token; "-" (one past the end) only where
// the operation allows it.
function arrayIndex(token, length, allowEnd) {
  if (token === '-' && allowEnd) return length;
  if (!/^(0|[1-9][0-9]*)$/.test(token)) throw new PatchError(`"${token}" is not an array index`);
  const i = Number(token);
  if (i > length || (!allowEnd && i === length)) throw new PatchError(`index ${i} is out of bounds`);
  return i;
}

// setOwn sets a property without ever reaching a prototype: a patch naming
// "__proto__" gets a plain own property, as JSON.parse would make.
function setOwn(obj, key, value) {
  Object.defineProperty(obj, key, { value, writable: true, enumerable: true, configurable: true });
}

function get(doc, tokens) {
  let cur = doc;
  for (const t of tokens) {
    if (Array.isArray(cur)) {
      cur = cur[arrayIndex(t, cur.length, false)];
    } else if (isContainer(cur) && own(cur, t)) {
      cur = cur[t];
    } else {
      throw new PatchError(`path /${tokens.join('/')} does not exist`);
    }
  }
  return cur;
}

function parentOf(doc, tokens) {
  const parent = get(doc, tokens.slice(0, -1));
  if (!isContainer(parent)) throw new PatchError(`the parent of /${tokens.join('/')} is not an object or array`);
  return parent;
}

// Each operation takes the document and returns it (the root may be
// replaced); containers inside it are changed in place.
function add(doc, tokens, value) {
  if (tokens.length === 0) return value;
  const parent = parentOf(doc, tokens);
  const key = tokens[tokens.length - 1];
  if (Array.isArray(parent)) parent.splice(arrayIndex(key, parent.length, true), 0, value);
  else setOwn(parent, key, value);
  return doc;
}

function remove(doc, tokens) {
  if (tokens.length === 0) return null;
  const parent = parentOf(doc, tokens);
  const key = tokens[tokens.length - 1];
  if (Array.isArray(parent)) {
    parent.splice(arrayIndex(key, parent.length, false), 1);
  } else {
    if (!own(parent, key)) throw new PatchError(`path /${tokens.join('/')} does not exist`);
    delete parent[key];
  }
  return doc;
}

function replace(doc, tokens, value) {
  if (tokens.length === 0) return value;
  get(doc, tokens); // must exist
  const parent = parentOf(doc, tokens);
  const key = tokens[tokens.length - 1];
  if (Array.isArray(parent)) parent[arrayIndex(key, parent.length, false)] = value;
  else setOwn(parent, key, value);
  return doc;
}

export function deepEqual(a, b) {
  if (a === b) return true;
  if (!isContainer(a) || !isContainer(b) || Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a)) return a.length === b.length && a.every((v, i) => deepEqual(v, b[i]));
  const ka = Object.keys(a);
  const kb = Object.keys(b);
  return ka.length === kb.length && ka.every((k) => own(b, k) && deepEqual(a[k], b[k]));
}

const clone = (v) => (v === undefined ? undefined : structuredClone(v));

function applyOne(doc, op) {
  if (!isContainer(op)) throw new PatchError('an operation must be an object');
  const path = parsePointer(op.path);
  const needsValue = () => {
    if (!own(op, 'value')) throw new PatchError(`"${op.op}" needs a value`);
    return clone(op.value);
  };
  switch (op.op) {
    case 'add':
      return add(doc, path, needsValue());
    case 'remove':
      return remove(doc, path);
    case 'replace':
      return replace(doc, path, needsValue());
    case 'move': {
      const from = parsePointer(op.from);
      if (path.length > from.length && from.every((t, i) => t === path[i])) {
        throw new PatchError(`cannot move ${op.from} into its own child ${op.path}`);
      }
      const value = get(doc, from);
      return add(remove(doc, from), path, value);
    }
    case 'copy':
      return add(doc, path, clone(get(doc, parsePointer(op.from))));
    case 'test':
      if (!deepEqual(get(doc, path), op.value)) throw new PatchError(`test failed at ${op.path}`);
      return doc;
    default:
      throw new PatchError(`unknown operation ${JSON.stringify(op.op)}`);
  }
}

// applyPatch returns a new document with every operation of patch applied,
// or throws a PatchError naming the first that failed; doc is not changed.
export function applyPatch(doc, patch) {
  if (!Array.isArray(patch)) throw new PatchError('a patch must be an array of operations');
  let out = clone(doc);
  patch.forEach((op, i) => {
    try {
      out = applyOne(out, op);
    } catch (err) {
      throw err instanceof PatchError ? new PatchError(err.message, i) : err;
    }
  });
  return out;
}
