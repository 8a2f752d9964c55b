package readmetest

import (
	"context"
	"fmt"
	"go/ast"
	"go/format"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"
)

// module is the import path of the repository root's module.
const module = "github.com/fairmp/fairmp"

// harness holds what a fragment may use without defining it: what the
// README's text has defined by the time a fragment is read. Keep it short
// and honest; a block that needs more should define it.
const harness = `// The data set of the tour (README, "A five-minute tour").
var ds *datasets.Dataset

// The gorgonia graph and the task of "FMP on your model", which the
// model-loading block uses.
var (
	g    *G.ExprGraph
	task *train.Task
)

// The tour's context, which stops training when cancelled.
var ctx = context.Background()

// The tour's error check.
func check(err error) {
	if err != nil {
		log.Fatal(err)
	}
}

// The reader's own model kind, which "Your own model" declares in the
// file that defines it: a stand-in with the signatures KindSpec takes.
type MineConfig struct{ layers.Base }

type Mine struct{ cfg MineConfig }

func DefaultMineConfig(in, classes int) MineConfig {
	return MineConfig{layers.DefaultBase("mine", in, classes)}
}

func NewMine(g *G.ExprGraph, gr *graph.Graph, cfg MineConfig, phase *layers.Phase) (*Mine, error) {
	return &Mine{cfg: cfg}, nil
}

func (m *Mine) Config() MineConfig                 { return m.cfg }
func (m *Mine) Forward(x *G.Node) (*G.Node, error) { return x, nil }
func (m *Mine) Learnables() G.Nodes                { return nil }

func MineParams(cfg MineConfig) []layers.Param { return nil }
`

// harnessImports are the packages harness uses.
var harnessImports = []string{"context", "datasets", "G", "graph", "layers", "log", "train"}

// imports maps the package names a fragment may use to their import
// paths. A fragment is compiled with the imports of the names it uses as
// package selectors (pkg.Name), and no others, so an import the fragment
// does not need cannot fail it. A package missing here shows as
// "undefined: name": add it.
var imports = map[string]string{
	"bytes":       "bytes",
	"context":     "context",
	"errors":      "errors",
	"fmt":         "fmt",
	"io":          "io",
	"log":         "log",
	"os":          "os",
	"slices":      "slices",
	"fmp":         module + "/fmp",
	"score":       module + "/fmp/score",
	"graph":       module + "/graph",
	"datasets":    module + "/graph/datasets",
	"features":    module + "/graph/features",
	"sample":      module + "/graph/sample",
	"layers":      module + "/layers",
	"blas":        module + "/internal/blas",
	"fairness":    module + "/layers/fairness",
	"fairtrain":   module + "/layers/fairtrain",
	"minibatch":   module + "/layers/minibatch",
	"modelio":     module + "/fmp/modelio",
	"perturb":     module + "/layers/perturb",
	"postprocess": module + "/layers/postprocess",
	"train":       module + "/layers/train",
	"metrics":     module + "/metrics",
	"selection":   module + "/metrics/selection",
	"G":           "gorgonia.org/gorgonia",
	"tensor":      "gorgonia.org/tensor",
}

// block is one ```go block of a Markdown file.
type block struct {
	line int    // the line of its opening fence, 1-based
	src  string // its text, each line ending in "\n"
}

// extract returns the ```go blocks of a Markdown text.
func extract(md string) ([]block, error) {
	var out []block
	lines := strings.Split(md, "\n")
	for i := 0; i < len(lines); i++ {
		if strings.TrimRight(lines[i], " \t") != "```go" {
			continue
		}
		b := block{line: i + 1}
		j := i + 1
		for ; j < len(lines) && strings.TrimRight(lines[j], " \t") != "```"; j++ {
			b.src += lines[j] + "\n"
		}
		if j == len(lines) {
			return nil, fmt.Errorf("line %d: the ```go block is not closed", b.line)
		}
		out = append(out, b)
		i = j
	}
	return out, nil
}

// kind is what a block is.
type kind int

const (
	program    kind = iota // starts with a package clause
	decls                  // top-level declarations (var, type, func)
	statements             // the body of a function
)

// directive is the //line comment that makes the compiler report
// positions in README lines from the line after it on.
func directive(b block) string { return fmt.Sprintf("//line README.md:%d:1\n", b.line+1) }

// generate returns the Go file that compiles b, and its kind.
func generate(b block) (string, kind, error) {
	fset := token.NewFileSet()
	if _, err := parser.ParseFile(fset, "", b.src, parser.PackageClauseOnly); err == nil {
		return directive(b) + b.src, program, nil
	}
	k := decls
	wrapped := "package main\n" + directive(b) + b.src
	f, err := parser.ParseFile(fset, "", wrapped, 0)
	if err != nil {
		k = statements
		wrapped = "package main\nfunc main() {\n" + directive(b) + b.src + "}\n"
		if f, err = parser.ParseFile(fset, "", wrapped, 0); err != nil {
			return "", 0, err
		}
	}

	// The imports: the harness's, and those of the package names the
	// block uses as selectors.
	used := map[string]bool{}
	for _, n := range harnessImports {
		used[n] = true
	}
	ast.Inspect(f, func(n ast.Node) bool {
		if s, ok := n.(*ast.SelectorExpr); ok {
			if id, ok := s.X.(*ast.Ident); ok && imports[id.Name] != "" {
				used[id.Name] = true
			}
		}
		return true
	})
	names := make([]string, 0, len(used))
	for n := range used {
		names = append(names, n)
	}
	sort.Strings(names)
	var src strings.Builder
	src.WriteString("package main\n\nimport (\n")
	for _, n := range names {
		p := imports[n]
		if p[strings.LastIndex(p, "/")+1:] == n {
			fmt.Fprintf(&src, "\t%q\n", p)
		} else {
			fmt.Fprintf(&src, "\t%s %q\n", n, p)
		}
	}
	src.WriteString(")\n\n" + harness + "\n")

	if k == decls {
		src.WriteString(directive(b) + b.src + "//line harness.go:1\nfunc main() {}\n")
		return src.String(), k, nil
	}
	// A fragment's last variables are what a reader's code goes on to
	// use: use them, so that "declared and not used" cannot fail it.
	var blanks []string
	for _, st := range f.Decls[0].(*ast.FuncDecl).Body.List {
		var ids []*ast.Ident
		switch st := st.(type) {
		case *ast.AssignStmt:
			if st.Tok == token.DEFINE {
				for _, e := range st.Lhs {
					if id, ok := e.(*ast.Ident); ok {
						ids = append(ids, id)
					}
				}
			}
		case *ast.DeclStmt:
			if gd, ok := st.Decl.(*ast.GenDecl); ok && gd.Tok == token.VAR {
				for _, sp := range gd.Specs {
					ids = append(ids, sp.(*ast.ValueSpec).Names...)
				}
			}
		}
		for _, id := range ids {
			if id.Name != "_" {
				blanks = append(blanks, "\t_ = "+id.Name+"\n")
			}
		}
	}
	src.WriteString("func main() {\n" + directive(b) + b.src + "//line harness.go:1\n" + strings.Join(blanks, "") + "}\n")
	return src.String(), k, nil
}

// formatted returns "" if b is as gofmt writes it, else gofmt's text of
// the block (or its error).
func formatted(b block, k kind) string {
	var pre, post string
	body := b.src
	switch k {
	case decls:
		pre = "package p\n\n"
	case statements:
		pre, post = "package p\n\nfunc _() {\n", "}\n"
		var ind strings.Builder
		for _, l := range strings.SplitAfter(body, "\n") {
			if strings.TrimSpace(l) != "" {
				ind.WriteString("\t")
			}
			ind.WriteString(l)
		}
		body = ind.String()
	}
	out, err := format.Source([]byte(pre + body + post))
	if err != nil {
		return err.Error()
	}
	got := strings.TrimSuffix(strings.TrimPrefix(string(out), pre), post)
	if got == body {
		return ""
	}
	if k == statements {
		got = regexp.MustCompile(`(?m)^\t`).ReplaceAllString(got, "")
	}
	return "gofmt would write:\n" + got
}

// check compiles every block in a temporary module that replaces the
// library's module with the repository at root, and returns one message
// per failing block. It returns an error if the check itself cannot run.
func checkBlocks(t *testing.T, root string, blocks []block) ([]string, error) {
	goCmd, err := exec.LookPath("go")
	if err != nil {
		t.Skip("the go command is not on PATH: the README's Go blocks are not compiled")
	}
	dir := t.TempDir()
	goMod, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		return nil, err
	}
	goLine := regexp.MustCompile(`(?m)^go \S+$`).Find(goMod)
	if goLine == nil {
		return nil, fmt.Errorf("%s: no go directive", filepath.Join(root, "go.mod"))
	}
	mod := fmt.Sprintf("module readmecheck\n\n%s\n\nrequire %s v0.0.0\n\nreplace %s => %s\n", goLine, module, module, root)
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte(mod), 0o644); err != nil {
		return nil, err
	}
	// The library's go.sum holds the sums of every module it needs.
	sum, err := os.ReadFile(filepath.Join(root, "go.sum"))
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(dir, "go.sum"), sum, 0o644); err != nil {
		return nil, err
	}

	var failures []string
	byPkg := map[string]block{}
	for _, b := range blocks {
		src, k, err := generate(b)
		if err != nil {
			failures = append(failures, fmt.Sprintf("README.md:%d: the ```go block starting here does not parse: %v", b.line, err))
			continue
		}
		if msg := formatted(b, k); msg != "" {
			failures = append(failures, fmt.Sprintf("README.md:%d: the ```go block starting here is not gofmt-formatted: %s", b.line, msg))
		}
		pkg := fmt.Sprintf("b%04d", b.line)
		byPkg["readmecheck/"+pkg] = b
		if err := os.MkdirAll(filepath.Join(dir, pkg), 0o755); err != nil {
			return nil, err
		}
		if err := os.WriteFile(filepath.Join(dir, pkg, "main.go"), []byte(src), 0o644); err != nil {
			return nil, err
		}
	}
	if len(byPkg) == 0 {
		return failures, nil
	}

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	run := func(args ...string) (string, error) {
		cmd := exec.CommandContext(ctx, goCmd, args...)
		cmd.Dir = dir
		// No network: the module cache is the library's. -mod=mod lets
		// go fill the temporary go.mod's requirements from it.
		cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOPROXY=off", "GOWORK=off")
		out, err := cmd.CombinedOutput()
		if ctx.Err() != nil {
			return string(out), fmt.Errorf("go %s: stopped after 5 minutes: %w", strings.Join(args, " "), ctx.Err())
		}
		return string(out), err
	}
	// go vet type-checks every block at once without linking; it stops at
	// a package's first type error, so a failing block is built alone
	// for the compiler's every message.
	out, err := run("vet", "./...")
	if ctx.Err() != nil {
		return nil, err
	}
	if err == nil {
		return failures, nil
	}
	header := regexp.MustCompile(`^# \[?(readmecheck/b\d+)\]?$`)
	perPkg := map[string]*strings.Builder{}
	var cur string
	var stray strings.Builder
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		if m := header.FindStringSubmatch(l); m != nil {
			cur = m[1]
			if perPkg[cur] == nil {
				perPkg[cur] = &strings.Builder{}
			}
			continue
		}
		if cur == "" {
			stray.WriteString(l + "\n")
			continue
		}
		perPkg[cur].WriteString(l + "\n")
	}
	if len(perPkg) == 0 {
		return nil, fmt.Errorf("go vet failed outside the README's blocks (is the module cache missing a dependency?):\n%s", out)
	}
	pkgs := make([]string, 0, len(perPkg))
	for p := range perPkg {
		pkgs = append(pkgs, p)
	}
	sort.Strings(pkgs)
	for _, p := range pkgs {
		b, ok := byPkg[p]
		if !ok {
			return nil, fmt.Errorf("go vet reported an unknown package %s:\n%s", p, out)
		}
		msg := perPkg[p].String()
		if bout, berr := run("build", "-o", os.DevNull, "./"+strings.TrimPrefix(p, "readmecheck/")); berr != nil {
			if ctx.Err() != nil {
				return nil, berr
			}
			msg = regexp.MustCompile(`(?m)^# .*\n`).ReplaceAllString(bout, "")
		}
		failures = append(failures, fmt.Sprintf("README.md:%d: the ```go block starting here does not compile (go vet):\n%s", b.line, strings.TrimRight(msg, "\n")))
	}
	return failures, nil
}

// TestREADMEGoBlocks compiles every ```go block of the README (see the
// package doc).
func TestREADMEGoBlocks(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	md, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	blocks, err := extract(string(md))
	if err != nil {
		t.Fatalf("README.md: %v", err)
	}
	if len(blocks) < 3 {
		t.Fatalf("README.md: only %d ```go blocks found: are the fences still ```go?", len(blocks))
	}
	failures, err := checkBlocks(t, root, blocks)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range failures {
		t.Error(f)
	}
	lines := make([]string, len(blocks))
	for i, b := range blocks {
		lines[i] = strconv.Itoa(b.line)
	}
	t.Logf("%d Go blocks checked (README lines %s)", len(blocks), strings.Join(lines, ", "))
}

// TestHarness checks the harness on blocks of known fate: correct ones of
// each kind pass, and a broken one is reported at its line with the
// compiler's message in README lines.
func TestHarness(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	md := strings.Join([]string{
		"# A README", // 1
		"",
		"```go", // 3: a program
		"package main",
		"",
		"import \"fmt\"",
		"",
		"func main() { fmt.Println(1) }",
		"```",
		"",
		"```go", // 11: statements using the harness; p is not used again
		"p, err := train.Predict(nil, task, nil)",
		"check(err)",
		"```",
		"",
		"```go", // 16: broken: f is not defined
		"rep, _ := metrics.Evaluate(nil, 2, ds.Labels, ds.Sens, nil, metrics.DefaultOptions())",
		"check(modelio.Save(f, nil, modelio.DefaultSaveConfig()))",
		"```",
		"",
		"```go", // 21: declarations, not gofmt-formatted
		"var kindMine = layers.MustDeclare(layers.KindSpec[MineConfig, *Mine]{",
		"Name: \"mine\", Default: DefaultMineConfig, New: NewMine, Config: (*Mine).Config, Params: MineParams,",
		"})",
		"```",
		"",
	}, "\n")
	blocks, err := extract(md)
	if err != nil {
		t.Fatal(err)
	}
	if len(blocks) != 4 {
		t.Fatalf("%d blocks extracted, want 4", len(blocks))
	}
	failures, err := checkBlocks(t, root, blocks)
	if err != nil {
		t.Fatal(err)
	}
	all := strings.Join(failures, "\n")
	if len(failures) != 2 {
		t.Fatalf("%d failures, want 2 (block 16 does not compile, block 21 is not formatted):\n%s", len(failures), all)
	}
	for _, want := range []string{
		"README.md:16: the ```go block starting here does not compile",
		"README.md:18:20: undefined: f",
		"README.md:21: the ```go block starting here is not gofmt-formatted",
		"\tName: \"mine\",",
	} {
		if !strings.Contains(all, want) {
			t.Errorf("the failures do not contain %q:\n%s", want, all)
		}
	}
	if strings.Contains(all, "README.md:3:") || strings.Contains(all, "README.md:11:") || strings.Contains(all, "imported and not used") {
		t.Errorf("a correct block was reported:\n%s", all)
	}
}
