package doclinks

import (
	"fmt"
	"go/ast"
	"go/doc"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

// module is the import path of the repository root's module; the lab's
// (examples/paper) is below it.
const module = "github.com/fairmp/fairmp"

// candidate matches the text of a doc link: [Name], [Name.Method],
// [pkg.Name], [pkg.Name.Method], with an optional leading '*'.
var candidate = regexp.MustCompile(`\[(\*?[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*){0,2})\]`)

// TestDocLinks fails on a doc link ([train.Fit], [Kind.Build]) in a doc
// comment of the repository's Go code that does not resolve: a symbol
// that does not exist in its package, or a package the file does not
// import. Links into the repository's own packages are checked to the
// symbol (and method); links into other packages to the package.
func TestDocLinks(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	pkgs, err := loadAll(root)
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	var bad []string
	for _, p := range pkgs {
		for _, c := range p.comments() {
			for _, m := range candidates(c.text) {
				checked++
				if why := p.resolve(m, pkgs); why != "" {
					bad = append(bad, fmt.Sprintf("%s: [%s]: %s", p.fset.Position(c.pos), m, why))
				}
			}
		}
	}
	sort.Strings(bad)
	for _, b := range bad {
		t.Error(b)
	}
	t.Logf("%d doc links checked in %d packages", checked, len(pkgs))
	if checked < 50 {
		t.Errorf("only %d doc links found: is the walk finding the code?", checked)
	}
}

// pkg is one parsed package: its import path, files and symbols.
type pkg struct {
	path  string
	fset  *token.FileSet
	files []*ast.File
	doc   *doc.Package
	syms  map[string]bool // Name and Recv.Name, exported or not
}

type docComment struct {
	pos  token.Pos
	text string
	file *ast.File
}

// loadAll parses every package of the repository (test files and
// testdata left out), keyed by import path.
func loadAll(root string) (map[string]*pkg, error) {
	out := map[string]*pkg{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			return nil
		}
		name := d.Name()
		if path != root && (strings.HasPrefix(name, ".") || name == "testdata" || name == "vendor") {
			return filepath.SkipDir
		}
		fset := token.NewFileSet()
		parsed, err := parser.ParseDir(fset, path, func(fi fs.FileInfo) bool { return !strings.HasSuffix(fi.Name(), "_test.go") }, parser.ParseComments)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return err
		}
		imp := module
		if rel != "." {
			imp += "/" + filepath.ToSlash(rel)
		}
		for _, ap := range parsed {
			var files []*ast.File
			names := make([]string, 0, len(ap.Files))
			for n := range ap.Files {
				names = append(names, n)
			}
			sort.Strings(names)
			for _, n := range names {
				files = append(files, ap.Files[n])
			}
			dp, err := doc.NewFromFiles(fset, files, imp, doc.AllDecls|doc.PreserveAST)
			if err != nil {
				return fmt.Errorf("%s: %w", path, err)
			}
			out[imp] = &pkg{path: imp, fset: fset, files: files, doc: dp, syms: symbols(files)}
		}
		return nil
	})
	if _, statErr := os.Stat(root); statErr != nil {
		return nil, statErr
	}
	return out, err
}

// symbols lists a package's top-level names and its methods as
// Recv.Name, and its struct fields as Type.Field (doc links may name
// neither fields nor unexported methods, but a comment naming a field in
// brackets is a broken link all the same).
func symbols(files []*ast.File) map[string]bool {
	s := map[string]bool{}
	for _, f := range files {
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				if d.Recv == nil || len(d.Recv.List) == 0 {
					s[d.Name.Name] = true
					continue
				}
				s[recvName(d.Recv.List[0].Type)+"."+d.Name.Name] = true
			case *ast.GenDecl:
				for _, sp := range d.Specs {
					switch sp := sp.(type) {
					case *ast.TypeSpec:
						s[sp.Name.Name] = true
						if it, ok := sp.Type.(*ast.InterfaceType); ok {
							for _, m := range it.Methods.List {
								for _, n := range m.Names {
									s[sp.Name.Name+"."+n.Name] = true
								}
							}
						}
					case *ast.ValueSpec:
						for _, n := range sp.Names {
							s[n.Name] = true
						}
					}
				}
			}
		}
	}
	return s
}

func recvName(e ast.Expr) string {
	switch e := e.(type) {
	case *ast.StarExpr:
		return recvName(e.X)
	case *ast.IndexExpr:
		return recvName(e.X)
	case *ast.IndexListExpr:
		return recvName(e.X)
	case *ast.Ident:
		return e.Name
	}
	return ""
}

// comments returns the doc comments godoc shows: package, declaration,
// spec and struct-field comments.
func (p *pkg) comments() []docComment {
	var out []docComment
	add := func(f *ast.File, g *ast.CommentGroup) {
		if g != nil {
			out = append(out, docComment{pos: g.Pos(), text: g.Text(), file: f})
		}
	}
	for _, f := range p.files {
		add(f, f.Doc)
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.FuncDecl:
				add(f, n.Doc)
				return false // comments inside bodies are not docs
			case *ast.GenDecl:
				add(f, n.Doc)
			case *ast.TypeSpec:
				add(f, n.Doc)
			case *ast.ValueSpec:
				add(f, n.Doc)
			case *ast.Field:
				add(f, n.Doc)
			}
			return true
		})
	}
	return out
}

// candidates returns the bracketed texts of a comment that the doc
// comment parser would take for doc links: outside code blocks (indented
// lines), preceded and followed by a space, punctuation or nothing, not a
// link definition ("[text]: url"), and naming an exported symbol or a
// qualified one ([i] in a formula is an index, not a link).
func candidates(text string) []string {
	var out []string
	for _, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(line, " ") || strings.HasPrefix(line, "\t") {
			continue // a code block
		}
		for _, m := range candidate.FindAllStringSubmatchIndex(line, -1) {
			before, after := line[:m[0]], line[m[1]:]
			if before != "" {
				r, _ := utf8.DecodeLastRuneInString(before)
				if !unicode.IsPunct(r) && !unicode.IsSpace(r) {
					continue
				}
				if r == '[' || r == ']' {
					continue // part of an index expression such as x[a[i]]
				}
			}
			if after != "" {
				r, _ := utf8.DecodeRuneInString(after)
				if r == ':' && strings.HasPrefix(strings.TrimSpace(after[1:]), "http") {
					continue // a link definition
				}
				if !unicode.IsPunct(r) && !unicode.IsSpace(r) {
					continue
				}
				if r == '(' || r == '[' {
					continue // [text](url) or an index
				}
			}
			text := line[m[2]:m[3]]
			first, _ := utf8.DecodeRuneInString(strings.TrimPrefix(text, "*"))
			if !strings.Contains(text, ".") && !unicode.IsUpper(first) {
				continue // [i], [rows]: an index in a formula, not a link
			}
			out = append(out, text)
		}
	}
	return out
}

// resolve returns why the link text does not resolve in p, or "".
func (p *pkg) resolve(text string, all map[string]*pkg) string {
	text = strings.TrimPrefix(text, "*")
	parts := strings.Split(text, ".")
	// A local symbol: Name or Recv.Name.
	if p.syms[text] {
		return ""
	}
	// A package: pkg.Name or pkg.Recv.Name, pkg a name imported by some
	// file of p (or a full import path, which doc links also allow).
	imp, ok := p.importPath(parts[0])
	if !ok {
		if len(parts) == 1 {
			return "no such symbol in package " + p.path
		}
		return fmt.Sprintf("neither a symbol of %s nor a package its files import (%q)", p.path, parts[0])
	}
	q, ours := all[imp]
	if !ours {
		return "" // the package is imported; symbols of other modules are not checked
	}
	sym := strings.Join(parts[1:], ".")
	if q.syms[sym] {
		return ""
	}
	return fmt.Sprintf("%s has no symbol %s", imp, sym)
}

// importPath returns the import path a file of p imports under name.
func (p *pkg) importPath(name string) (string, bool) {
	parser := p.doc.Parser()
	if imp, ok := parser.LookupPackage(name); ok {
		return imp, true
	}
	for _, f := range p.files {
		for _, is := range f.Imports {
			path := strings.Trim(is.Path.Value, `"`)
			local := path[strings.LastIndex(path, "/")+1:]
			if is.Name != nil {
				local = is.Name.Name
			}
			if local == name {
				return path, true
			}
		}
	}
	return "", false
}

// TestDocLinksDetects: the checker finds a broken link and accepts good
// ones (a local symbol, a method, an imported package, an index).
func TestDocLinksDetects(t *testing.T) {
	dir := t.TempDir()
	src := `// Package p is [Good], [Good.Do], [os.Open], x[i] and [rows]; but [Missing] and [Good.Nope] are not.
package p

import "os"

// Good is a type.
type Good struct{}

// Do does nothing.
func (Good) Do() { _ = os.Open }
`
	if err := os.WriteFile(filepath.Join(dir, "p.go"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	pkgs, err := loadAll(dir)
	if err != nil {
		t.Fatal(err)
	}
	p := pkgs[module]
	if p == nil {
		t.Fatalf("package not loaded: %v", pkgs)
	}
	var bad []string
	for _, c := range p.comments() {
		for _, m := range candidates(c.text) {
			if p.resolve(m, pkgs) != "" {
				bad = append(bad, m)
			}
		}
	}
	if fmt.Sprint(bad) != "[Missing Good.Nope]" {
		t.Errorf("broken links found: %v, want [Missing Good.Nope]", bad)
	}
}
