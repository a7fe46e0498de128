// Package deploy holds how azolla is run: devserver, the embedded Temporal
// server and Web UI that `azolla dev` starts (SQLite, one history shard).
package deploy
