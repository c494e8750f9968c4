// Package ptytest opens pseudo-terminals for the tests that check what a
// command prints to a terminal. It works on Linux only.
package ptytest
