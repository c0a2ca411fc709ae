package client

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// One import is enough: every exported constant, type and function of
// package api has a declaration of the same name in package client, so
// that a user compares m.Status with client.MessageDelivered, not with
// api.MessageDelivered after a second import.
func TestOneImportIsEnough(t *testing.T) {
	apiNames := exportedNames(t, "api")
	clientNames := exportedNames(t, ".")
	// Helpers of package api's own JSON, no part of what a user compares
	// or builds.
	notForUsers := []string{"Second"}
	for _, name := range apiNames {
		if !slices.Contains(clientNames, name) && !slices.Contains(notForUsers, name) {
			t.Errorf("api.%s has no client.%s", name, name)
		}
	}
}

// exportedNames lists the exported top-level constants, types, variables
// and functions (not methods) of the non-test files of dir.
func exportedNames(t *testing.T, dir string) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	fset := token.NewFileSet()
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		file, err := parser.ParseFile(fset, f, src, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range file.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				if d.Recv == nil && d.Name.IsExported() {
					names = append(names, d.Name.Name)
				}
			case *ast.GenDecl:
				for _, s := range d.Specs {
					switch s := s.(type) {
					case *ast.TypeSpec:
						if s.Name.IsExported() {
							names = append(names, s.Name.Name)
						}
					case *ast.ValueSpec:
						for _, n := range s.Names {
							if n.IsExported() {
								names = append(names, n.Name)
							}
						}
					}
				}
			}
		}
	}
	return names
}
