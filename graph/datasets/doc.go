// Package datasets loads fairness benchmark graphs (FairGNN's NBA and
// Pokec files, NIFTY's Bail, Credit and German files) and generates
// synthetic graphs whose sensitive homophily is set by a knob.
package datasets
