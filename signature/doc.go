// Package signature computes failure signatures: SHA-256 hashes of command output.
package signature
