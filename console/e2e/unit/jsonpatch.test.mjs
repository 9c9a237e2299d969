// The console's RFC 6902 module, on the cases of the RFC's Appendix A and
// the failure rules AG-UI clients follow (all or nothing, input untouched).

import assert from 'node:assert/strict';
import { test } from 'node:test';

import { applyPatch, parsePointer, PatchError } from '../../static/js/jsonpatch.js';

const cases = [
  ['add an object member', { foo: 'bar' }, [{ op: 'add', path: '/baz', value: 'qux' }], { foo: 'bar', baz: 'qux' }],
  ['add an array element', { foo: ['bar', 'baz'] }, [{ op: 'add', path: '/foo/1', value: 'qux' }], { foo: ['bar', 'qux', 'baz'] }],
  ['append with "-"', { rows: [1, 2] }, [{ op: 'add', path: '/rows/-', value: 3 }], { rows: [1, 2, 3] }],
  ['remove an object member', { baz: 'qux', foo: 'bar' }, [{ op: 'remove', path: '/baz' }], { foo: 'bar' }],
  ['remove an array element', { foo: ['bar', 'qux', 'baz'] }, [{ op: 'remove', path: '/foo/1' }], { foo: ['bar', 'baz'] }],
  ['replace a value', { baz: 'qux', foo: 'bar' }, [{ op: 'replace', path: '/baz', value: 'boo' }], { baz: 'boo', foo: 'bar' }],
  ['move a value', { foo: { bar: 'baz', waldo: 'fred' }, qux: { corge: 'grault' } }, [{ op: 'move', from: '/foo/waldo', path: '/qux/thud' }],
    { foo: { bar: 'baz' }, qux: { corge: 'grault', thud: 'fred' } }],
  ['move an array element', { foo: ['all', 'grass', 'cows', 'eat'] }, [{ op: 'move', from: '/foo/1', path: '/foo/3' }], { foo: ['all', 'cows', 'eat', 'grass'] }],
  ['copy a value', { a: { b: [1] } }, [{ op: 'copy', from: '/a', path: '/c' }], { a: { b: [1] }, c: { b: [1] } }],
  ['test, then add', { baz: 'qux', foo: ['a', 2, 'c'] }, [{ op: 'test', path: '/baz', value: 'qux' }, { op: 'test', path: '/foo/1', value: 2 }, { op: 'add', path: '/ok', value: true }],
    { baz: 'qux', foo: ['a', 2, 'c'], ok: true }],
  ['add a nested member object', { foo: 'bar' }, [{ op: 'add', path: '/child', value: { grandchild: {} } }], { foo: 'bar', child: { grandchild: {} } }],
  ['ignore unrecognised members of an operation', { foo: 'bar' }, [{ op: 'add', path: '/baz', value: 'qux', xyz: 123 }], { foo: 'bar', baz: 'qux' }],
  ['escaped pointer tokens', { '/': 9, '~1': 10 }, [{ op: 'test', path: '/~01', value: 10 }, { op: 'replace', path: '/~1', value: 0 }], { '/': 0, '~1': 10 }],
  ['add an array value', { foo: ['bar'] }, [{ op: 'add', path: '/foo/-', value: ['abc', 'def'] }], { foo: ['bar', ['abc', 'def']] }],
  ['replace the whole document', { a: 1 }, [{ op: 'replace', path: '', value: [1] }], [1]],
  ['add null', {}, [{ op: 'add', path: '/n', value: null }], { n: null }],
];

for (const [name, doc, patch, want] of cases) {
  test(`applies: ${name}`, () => {
    const before = structuredClone(doc);
    assert.deepEqual(applyPatch(doc, patch), want);
    assert.deepEqual(doc, before, 'the input document is not changed');
  });
}

const failures = [
  ['remove a missing member', { a: 1 }, [{ op: 'remove', path: '/b' }]],
  ['replace a missing member', { a: 1 }, [{ op: 'replace', path: '/b', value: 2 }]],
  ['add under a missing parent', { a: 1 }, [{ op: 'add', path: '/x/y', value: 2 }]],
  ['array index past the end', { a: [1] }, [{ op: 'add', path: '/a/2', value: 2 }]],
  ['array index with a leading zero', { a: [1, 2] }, [{ op: 'replace', path: '/a/01', value: 2 }]],
  ['test a string against a number', { baz: 'qux', foo: ['a', 2, 'c'] }, [{ op: 'test', path: '/foo/1', value: '2' }]],
  ['move into its own child', { a: { b: {} } }, [{ op: 'move', from: '/a', path: '/a/b/c' }]],
  ['an unknown operation', {}, [{ op: 'merge', path: '/a', value: 1 }]],
  ['a path that is not a pointer', {}, [{ op: 'add', path: 'a/b', value: 1 }]],
  ['add without a value', {}, [{ op: 'add', path: '/a' }]],
];

for (const [name, doc, patch] of failures) {
  test(`refuses: ${name}`, () => {
    assert.throws(() => applyPatch(doc, patch), PatchError);
  });
}

test('a failing patch changes nothing (all or nothing)', () => {
  const doc = { a: 1, rows: [1] };
  assert.throws(() => applyPatch(doc, [{ op: 'add', path: '/rows/-', value: 2 }, { op: 'remove', path: '/missing' }]), /operation 1/);
  assert.deepEqual(doc, { a: 1, rows: [1] });
});

test('"__proto__" is an ordinary member, never the prototype', () => {
  const out = applyPatch({}, [{ op: 'add', path: '/__proto__', value: { polluted: true } }]);
  assert.equal(Object.getPrototypeOf(out), Object.prototype);
  assert.equal(({}).polluted, undefined);
  assert.deepEqual(Object.keys(out), ['__proto__']);
});

test('parsePointer unescapes ~1 before ~0', () => {
  assert.deepEqual(parsePointer('/a~1b/m~0n/~01'), ['a/b', 'm~n', '~1']);
  assert.deepEqual(parsePointer(''), []);
});
