package server

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestEnumsJoinedWhole reads the constants of each enum from the source of
// both sides, so that a value added to config, or to the package it
// configures, without its case in enums.go fails here: every configured
// value must map (no panic), and onto every engine value exactly once.
func TestEnumsJoinedWhole(t *testing.T) {
	cases := []struct {
		name string
		// configPrefix names the config constants of the enum.
		configPrefix string
		// pkg and typ name the engine's enum type.
		pkg, typ string
		convert  func(string) string
	}{
		{"strategy", "Strategy", "tasks", "Strategy", func(s string) string { return string(teamStrategy(s)) }},
		{"statusText", "StatusText", "mapping", "StatusTextPolicy", func(s string) string { return string(statusTextPolicy(s)) }},
		{"a2ui", "A2UI", "mapping", "A2UIMode", func(s string) string { return string(a2uiMode(s)) }},
	}
	configConsts := stringConsts(t, "config", func(name, _ string) bool { return true })
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var configured []string
			for name, v := range configConsts {
				if strings.HasPrefix(name, c.configPrefix) {
					configured = append(configured, v)
				}
			}
			engine := stringConsts(t, c.pkg, func(_, typ string) bool { return typ == c.typ })
			if len(configured) == 0 || len(engine) == 0 {
				t.Fatalf("found %d config and %d %s.%s constants; the test reads the wrong names", len(configured), len(engine), c.pkg, c.typ)
			}
			var mapped []string
			for _, v := range configured {
				func() {
					defer func() {
						if r := recover(); r != nil {
							t.Errorf("config value %q has no case in enums.go: %v", v, r)
						}
					}()
					mapped = append(mapped, c.convert(v))
				}()
			}
			var want []string
			for _, v := range engine {
				want = append(want, v)
			}
			slices.Sort(mapped)
			slices.Sort(want)
			if !slices.Equal(mapped, want) {
				t.Errorf("config's %s values map onto %q; %s.%s has %q", c.name, mapped, c.pkg, c.typ, want)
			}
		})
	}
}

// stringConsts are the string constants (name → value) of the non-test
// files of the bridge package dir whose name and declared type (""
// when untyped) keep accepts.
func stringConsts(t *testing.T, dir string, keep func(name, typ string) bool) map[string]string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("..", dir, "*.go")) // the test runs in server/
	if err != nil || len(files) == 0 {
		t.Fatalf("no Go files in %s: %v", dir, err)
	}
	out := map[string]string{}
	fset := token.NewFileSet()
	for _, path := range files {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		src, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		f, err := parser.ParseFile(fset, path, src, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			gd, ok := d.(*ast.GenDecl)
			if !ok || gd.Tok != token.CONST {
				continue
			}
			for _, spec := range gd.Specs {
				vs := spec.(*ast.ValueSpec)
				typ := ""
				if id, ok := vs.Type.(*ast.Ident); ok {
					typ = id.Name
				}
				for i, name := range vs.Names {
					if i >= len(vs.Values) {
						continue
					}
					lit, ok := vs.Values[i].(*ast.BasicLit)
					if !ok || lit.Kind != token.STRING || !keep(name.Name, typ) {
						continue
					}
					v, err := strconv.Unquote(lit.Value)
					if err != nil {
						t.Fatal(err)
					}
					out[name.Name] = v
				}
			}
		}
	}
	return out
}
