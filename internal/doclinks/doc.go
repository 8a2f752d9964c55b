// Package doclinks holds one test: every doc link in the doc comments of
// the repository's Go code (a bracketed train.Fit or layers.Kind.Build)
// resolves, so that cross-references in the documentation cannot rot.
// Run it with go test ./internal/doclinks.
package doclinks
