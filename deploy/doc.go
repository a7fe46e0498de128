// Package deploy will hold the embedded development server (Temporal server
// and Web UI on SQLite), container files and Temporal dynamic config. Empty
// until the lifecycle lands.
package deploy
