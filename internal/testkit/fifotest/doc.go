// Package fifotest checks that a reader refuses a FIFO put where a file
// should be, instead of waiting on it for ever. It works on Unix only.
package fifotest
