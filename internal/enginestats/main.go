// Command enginestats measures what issue 32 asks of the run engine, on
// the non-test files of package tasks (tasks/*.go, not its subpackages),
// so the figures can be taken again after any change (make engine-stats):
//
//   - lines per file and in all, and the longest functions (go/ast, from
//     the func keyword to the closing brace);
//   - forks between a single agent and a team: nil comparisons of anything
//     named team, bool parameters named team, and tests of the driver's
//     own agent (d.agent != nil), which stand for "is this a team run";
//   - calls to an agent (the Agent interface's A2A methods) outside
//     upstream.go;
//   - public error codes (the string values of the code tables) written as
//     string literals in more than one place in the module's non-test
//     files.
//
// Run it from the module root: go run ./internal/enginestats.
package main

import (
	"cmp"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// a2aMethods are the Agent interface's calls to a remote agent.
var a2aMethods = map[string]bool{"Send": true, "SendStreaming": true, "GetTask": true, "CancelTask": true, "Subscribe": true}

func main() {
	fset := token.NewFileSet()
	files := parseDir(fset, "tasks")
	fmt.Println("== package tasks, non-test files")
	total := 0
	type fileLines struct {
		name string
		n    int
	}
	var sizes []fileLines
	for name, f := range files {
		n := fset.Position(f.End()).Line
		if tf := fset.File(f.Pos()); tf != nil {
			n = tf.LineCount()
		}
		total += n
		sizes = append(sizes, fileLines{name, n})
	}
	slices.SortFunc(sizes, func(a, b fileLines) int { return cmp.Or(b.n-a.n, strings.Compare(a.name, b.name)) })
	over := 0
	for _, s := range sizes {
		if s.n > 600 {
			over++
		}
	}
	fmt.Printf("lines: %d in %d files; files over 600 lines: %d\n", total, len(files), over)
	for _, s := range sizes[:min(5, len(sizes))] {
		fmt.Printf("  %5d %s\n", s.n, s.name)
	}

	type fn struct {
		name string
		n    int
	}
	var fns []fn
	forks := map[string][]string{}
	var calls []string
	for name, f := range files {
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok {
				continue
			}
			n := fset.Position(fd.End()).Line - fset.Position(fd.Pos()).Line + 1
			fns = append(fns, fn{funcName(fd), n})
			for _, p := range fd.Type.Params.List {
				if id, ok := p.Type.(*ast.Ident); ok && id.Name == "bool" {
					for _, pn := range p.Names {
						if strings.Contains(strings.ToLower(pn.Name), "team") {
							forks["team bool parameter"] = append(forks["team bool parameter"], pos(fset, pn.Pos()))
						}
					}
				}
			}
		}
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.BinaryExpr:
				if n.Op != token.EQL && n.Op != token.NEQ {
					return true
				}
				var other ast.Expr
				switch {
				case isNil(n.Y):
					other = n.X
				case isNil(n.X):
					other = n.Y
				default:
					return true
				}
				// What is compared: a catalog lookup c.agents[team.Name]
				// asks about an agent, s.teamSpec(x) about a team.
				subject := other
				switch e := other.(type) {
				case *ast.IndexExpr:
					subject = e.X
				case *ast.CallExpr:
					subject = e.Fun
				}
				text := strings.ToLower(exprText(subject))
				switch {
				case strings.Contains(text, "team"):
					forks["team nil check"] = append(forks["team nil check"], pos(fset, n.Pos())+" "+exprText(other))
				case text == "d.agent":
					forks["driver agent nil check"] = append(forks["driver agent nil check"], pos(fset, n.Pos())+" "+exprText(other))
				}
			case *ast.CallExpr:
				if sel, ok := n.Fun.(*ast.SelectorExpr); ok && a2aMethods[sel.Sel.Name] && filepath.Base(name) != "upstream.go" {
					calls = append(calls, pos(fset, n.Pos())+" "+exprText(sel))
				}
			}
			return true
		})
	}
	slices.SortFunc(fns, func(a, b fn) int { return cmp.Or(b.n-a.n, strings.Compare(a.name, b.name)) })
	long := 0
	for _, f := range fns {
		if f.n > 100 {
			long++
		}
	}
	fmt.Printf("functions: %d; over 100 lines: %d; longest:\n", len(fns), long)
	for _, f := range fns[:min(8, len(fns))] {
		fmt.Printf("  %5d %s\n", f.n, f.name)
	}
	nforks := 0
	for _, k := range slices.Sorted(maps.Keys(forks)) {
		nforks += len(forks[k])
		slices.Sort(forks[k])
		fmt.Printf("%s: %d\n", k, len(forks[k]))
		for _, p := range forks[k] {
			fmt.Printf("  %s\n", p)
		}
	}
	fmt.Printf("single-agent/team forks in all: %d\n", nforks)
	slices.Sort(calls)
	fmt.Printf("A2A calls outside upstream.go: %d\n", len(calls))
	for _, c := range calls {
		fmt.Printf("  %s\n", c)
	}

	fmt.Println("== public codes written as literals in the module's non-test files")
	codes, literals := codeLiterals()
	repeated := 0
	for _, c := range slices.Sorted(maps.Keys(codes)) {
		if why := otherVocabulary[c]; why != "" && len(literals[c]) > 1 {
			fmt.Printf("  %-28s %d, not counted: %s\n", c, len(literals[c]), why)
			continue
		}
		if len(literals[c]) > 1 {
			repeated++
			fmt.Printf("  %-28s %d: %s\n", c, len(literals[c]), strings.Join(literals[c], ", "))
		}
	}
	fmt.Printf("codes: %d; written more than once: %d\n", len(codes), repeated)
}

// otherVocabulary are codes whose string is also a word of another
// vocabulary, written as that word's own constant.
var otherVocabulary = map[string]string{
	"cancelled": "also AG-UI's RUN_FINISHED outcome and resume status (agui), the run outcome label (tasks) and a tool result's key",
}

// codeLiterals finds the public codes — the values of constants named
// Code* (agui), of the constants of package errcode, and the codes of
// a2a's classification table — and where each is written as a literal.
func codeLiterals() (codes map[string]bool, at map[string][]string) {
	codes, at = map[string]bool{}, map[string][]string{}
	fset := token.NewFileSet()
	var all []*ast.File
	_ = filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "node_modules" || strings.HasPrefix(d.Name(), ".") && path != ".") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return nil
		}
		all = append(all, f)
		inErrcode := f.Name.Name == "errcode"
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.ValueSpec:
				for i, name := range n.Names {
					if i < len(n.Values) && (inErrcode || strings.HasPrefix(name.Name, "Code")) {
						if s, ok := stringLit(n.Values[i]); ok {
							codes[s] = true
						}
					}
				}
			case *ast.CompositeLit:
				// a2a's classification rows: {err, "code", status, "message"}.
				if f.Name.Name == "a2a" && len(n.Elts) == 4 {
					if s, ok := stringLit(n.Elts[1]); ok {
						codes[s] = true
					}
				}
			}
			return true
		})
		return nil
	})
	for _, f := range all {
		ast.Inspect(f, func(n ast.Node) bool {
			if s, ok := stringLit(n); ok && codes[s] {
				at[s] = append(at[s], pos(fset, n.Pos()))
			}
			return true
		})
	}
	return codes, at
}

func stringLit(n ast.Node) (string, bool) {
	bl, ok := n.(*ast.BasicLit)
	if !ok || bl.Kind != token.STRING {
		return "", false
	}
	s, err := strconv.Unquote(bl.Value)
	return s, err == nil
}

func parseDir(fset *token.FileSet, dir string) map[string]*ast.File {
	out := map[string]*ast.File{}
	ents, err := os.ReadDir(dir)
	if err != nil {
		fmt.Fprintln(os.Stderr, "run from the module root:", err)
		os.Exit(2)
	}
	for _, e := range ents {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".go") || strings.HasSuffix(e.Name(), "_test.go") {
			continue
		}
		path := filepath.Join(dir, e.Name())
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		out[path] = f
	}
	return out
}

func funcName(fd *ast.FuncDecl) string {
	if fd.Recv == nil || len(fd.Recv.List) == 0 {
		return fd.Name.Name
	}
	t := fd.Recv.List[0].Type
	if s, ok := t.(*ast.StarExpr); ok {
		t = s.X
	}
	return exprText(t) + "." + fd.Name.Name
}

func isNil(e ast.Expr) bool {
	id, ok := e.(*ast.Ident)
	return ok && id.Name == "nil"
}

func exprText(e ast.Expr) string {
	switch e := e.(type) {
	case *ast.Ident:
		return e.Name
	case *ast.SelectorExpr:
		return exprText(e.X) + "." + e.Sel.Name
	case *ast.CallExpr:
		return exprText(e.Fun) + "(…)"
	case *ast.IndexExpr:
		return exprText(e.X) + "[" + exprText(e.Index) + "]"
	case *ast.StarExpr:
		return "*" + exprText(e.X)
	case *ast.ParenExpr:
		return "(" + exprText(e.X) + ")"
	}
	return fmt.Sprintf("%T", e)
}

func pos(fset *token.FileSet, p token.Pos) string {
	ps := fset.Position(p)
	return fmt.Sprintf("%s:%d", ps.Filename, ps.Line)
}
