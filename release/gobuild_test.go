package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
)

// TestVersionPackage: the variables the release build stamps with -X are
// declared where versionPackage says, as strings, so a moved or renamed
// variable fails here instead of shipping a binary that says "dev".
func TestVersionPackage(t *testing.T) {
	dir := filepath.Join("..", strings.TrimPrefix(versionPackage, "github.com/rukpak-kapp/rukpak-kapp/"))
	pkgs, err := parser.ParseDir(token.NewFileSet(), dir, func(fi fs.FileInfo) bool {
		return !strings.HasSuffix(fi.Name(), "_test.go")
	}, 0)
	if err != nil {
		t.Fatal(err)
	}
	found := map[string]bool{}
	for _, pkg := range pkgs {
		for _, f := range pkg.Files {
			for _, d := range f.Decls {
				g, ok := d.(*ast.GenDecl)
				if !ok || g.Tok != token.VAR {
					continue
				}
				for _, s := range g.Specs {
					v := s.(*ast.ValueSpec)
					for i, n := range v.Names {
						if i < len(v.Values) {
							if lit, ok := v.Values[i].(*ast.BasicLit); ok && lit.Kind == token.STRING {
								found[n.Name] = true
							}
						}
					}
				}
			}
		}
	}
	for _, name := range []string{"Version", "Revision"} {
		if !found[name] {
			t.Errorf("%s declares no string variable %s: the release build's -X %s.%s would set nothing", dir, name, versionPackage, name)
		}
	}
}
