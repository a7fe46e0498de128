// Package lifecycle groups the rules every step of an objective's
// lifecycle asks, one package a rule, none of them doing I/O of its own
// beyond the store role it is handed:
//
//   - claim: the claim/lease protocol over the claim table (acquire, renew
//     by compare-and-swap, release after the durable write), and the
//     keeper that renews a lease while a step works;
//   - transition: which status an objective may move to from which, and
//     which event each move emits;
//   - pause: the pause states handed to humans, with their prioritized
//     actions and the commands that carry them out;
//   - deadline: when an objective is due and whether it is overdue;
//   - budget: an objective's budget against its spend, whether a round
//     may start, and a human's change of the budget;
//   - inbox: the hand-back to humans as one read model: what waits for a
//     person, in which order, with which actions and spend (the CLI
//     prints it).
//
// What they may import: package domain, the store's roles (claim,
// transition, budget and inbox), textsafe, and one another (pause asks
// budget, inbox asks pause and deadline). Never the executor, the remote
// path, a forge, the CLI or Temporal.
package lifecycle
