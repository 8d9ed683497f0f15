// Package deploy holds the example deployment files (kubernetes/) described in docs/deploy.md;
// its test checks that they are well-formed and agree with each other.
package deploy
