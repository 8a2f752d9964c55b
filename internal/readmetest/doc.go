// Package readmetest holds one test: every ```go block of the
// repository's README.md compiles (go vet, in a temporary module that
// replaces github.com/fairmp/fairmp with the repository) and is
// gofmt-formatted, so that the code a reader copies cannot rot.
//
// A block that starts with a package clause is a whole program and is
// compiled as is. Any other block is a fragment, compiled with what the
// README's text has defined before it in scope (the harness in
// readme_test.go states it): the tour's data set ds and its check
// function, the gorgonia graph g and the task of "FMP on your model", and
// a stand-in for the reader's own model kind that "Your own model"
// declares. A fragment of top-level declarations goes at the package
// level; one of statements goes in a function body, followed by `_ = v`
// for each variable it declares at its top level (a fragment's last
// variables are what the reader's code goes on to use), with the imports
// of the package names it uses and no others. A failure names the README
// line where the block starts and the compiler's message, with the
// compiler's positions in README lines.
//
// Run it with go test ./internal/readmetest; it needs the go command and a
// module cache holding the repository's dependencies (it sets
// GOPROXY=off), and skips only when the go command is not on PATH.
package readmetest
