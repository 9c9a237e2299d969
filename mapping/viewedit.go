package mapping

import (
	"encoding/json"
	"strings"

	"github.com/a2a-agui-bridge/bridge/agui"
)

// sized mirrors one JSON value of the view with its encoded size (as
// encoding/json writes it). An object's members are tracked one by one
// once a change reaches inside it (expand), and an array's element count
// once something is appended to it; anything else is a leaf, sized whole
// when it was set. A change then costs the size of what changed plus the
// depth of its path, and the state's size is known at every step, so the
// state limit holds while data merges rather than after.
type sized struct {
	n     int
	kids  map[string]*sized // an expanded object's members
	arr   bool              // an array whose elements are counted
	items int
}

func sizeOf(v any) *sized {
	b, _ := json.Marshal(v)
	return &sized{n: len(b)}
}

// expand starts tracking the members of m, the object s sizes. Done once
// per object, the first time a change reaches inside it.
func (s *sized) expand(m map[string]any) {
	if s.kids != nil {
		return
	}
	s.kids = make(map[string]*sized, len(m))
	for k, v := range m {
		s.kids[k] = sizeOf(v)
	}
}

// memberSize is what member k of encoded size n adds to its object: the
// quoted key, the colon and the value.
func memberSize(k string, n int) int {
	b, _ := json.Marshal(k)
	return len(b) + 1 + n
}

// walk finds the object at path in the view, expanding the size nodes on
// the way; it returns the object and the nodes from the root to it.
// ok is false when path does not lead to an object.
func (t *Translator) walk(path []string) (obj map[string]any, chain []*sized, ok bool) {
	obj, node := t.view.doc, t.view.size
	node.expand(obj)
	chain = append(chain, node)
	for _, k := range path {
		c, isObj := obj[k].(map[string]any)
		if !isObj {
			return nil, nil, false
		}
		node = node.kids[k]
		node.expand(c)
		obj = c
		chain = append(chain, node)
	}
	return obj, chain, true
}

// grow adds d to the size of every node in chain.
func grow(chain []*sized, d int) {
	for _, s := range chain {
		s.n += d
	}
}

// put sets the value at path (whose parent must be an object of the view).
func (t *Translator) put(path []string, value any) {
	b, err := json.Marshal(value)
	if err != nil {
		return
	}
	k := path[len(path)-1]
	obj, chain, ok := t.walk(path[:len(path)-1])
	if !ok {
		return
	}
	parent := chain[len(chain)-1]
	old, had := parent.kids[k]
	op := "add"
	if had {
		grow(chain, len(b)-old.n)
		op = "replace"
	} else {
		d := memberSize(k, len(b))
		if len(parent.kids) > 0 {
			d++ // the comma
		}
		grow(chain, d)
	}
	parent.kids[k] = &sized{n: len(b)}
	obj[k] = value
	t.record(agui.PatchOp{Op: op, Path: pointer(path), Value: b})
}

// del removes the member at path, if the view has it.
func (t *Translator) del(path []string) {
	k := path[len(path)-1]
	obj, chain, ok := t.walk(path[:len(path)-1])
	if !ok {
		return
	}
	parent := chain[len(chain)-1]
	old, had := parent.kids[k]
	if !had {
		return
	}
	d := memberSize(k, old.n)
	if len(parent.kids) > 1 {
		d++
	}
	grow(chain, -d)
	delete(parent.kids, k)
	delete(obj, k)
	t.record(agui.PatchOp{Op: "remove", Path: pointer(path)})
}

// appendTo appends elems to the array at path, one operation each.
func (t *Translator) appendTo(path []string, elems []any) {
	k := path[len(path)-1]
	obj, chain, ok := t.walk(path[:len(path)-1])
	if !ok {
		return
	}
	arr, isArr := obj[k].([]any)
	if !isArr {
		return
	}
	node := chain[len(chain)-1].kids[k]
	if !node.arr {
		node.arr, node.items = true, len(arr)
	}
	chain = append(chain, node)
	at := pointer(path) + "/-"
	for _, e := range elems {
		if t.stateFull() {
			break
		}
		b, err := json.Marshal(e)
		if err != nil {
			continue
		}
		d := len(b)
		if node.items > 0 {
			d++
		}
		grow(chain, d)
		node.items++
		arr = append(arr, e)
		t.record(agui.PatchOp{Op: "add", Path: at, Value: b})
	}
	obj[k] = arr
}

// record queues op for the next STATE_DELTA. A value set again at the
// same path as the previous operation replaces it there (an agent setting
// one key a thousand times in an event sends one operation, not a
// thousand); appends never merge.
func (t *Translator) record(op agui.PatchOp) {
	ops := t.view.ops
	if n := len(ops); n > 0 && op.Op != "remove" && ops[n-1].Op != "remove" &&
		ops[n-1].Path == op.Path && !strings.HasSuffix(op.Path, "/-") {
		ops[n-1].Value = op.Value
		return
	}
	t.view.ops = append(ops, op)
}

// pointer is the RFC 6901 JSON pointer of path.
func pointer(path []string) string {
	var b strings.Builder
	for _, k := range path {
		b.WriteByte('/')
		b.WriteString(escapePointer(k))
	}
	return b.String()
}

// StateSize is the encoded size of State, kept as the state changes (no
// encoding of the whole state per event).
func (t *Translator) StateSize() int {
	if t.view.base < 0 {
		t.view.base = len(sharedState(t.opt.Input, t.stateKey(), nil)) - len("null")
	}
	return t.view.base + t.view.size.n
}

// viewSize is the encoded size of the view alone.
func (t *Translator) viewSize() int { return t.view.size.n }

// stateFull says the state has grown past Options.MaxStateBytes: the
// event's remaining data is not merged (the run is about to end with
// state_too_large), so one event cannot make the bridge merge more than
// the limit. A nested run (ViewPath) holds its view against the limit,
// a lower bound of the enclosing run's state.
func (t *Translator) stateFull() bool {
	limit := t.opt.MaxStateBytes
	switch {
	case limit <= 0:
		return false
	case t.opt.ViewPath != "":
		return t.viewSize() > limit
	}
	return t.StateSize() > limit
}
