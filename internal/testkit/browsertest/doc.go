// Package browsertest runs a headless Chromium for the tests that check a
// page as a person would see it. It works on Unix systems only.
package browsertest
