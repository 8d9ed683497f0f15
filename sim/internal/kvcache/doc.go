// Package kvcache holds the simulator's KV caches in the layout that makes large fleets fast,
// behind methods in the model's words (docs/model.md#one-instant, #routing, #precise-rules):
//
//   - GPU is a worker's G1 and Host its G2: slots hold blocks; keying a computed block (Key),
//     taking and releasing slots (Take, Acquire, Release), reserving, pinning and making
//     resident G2 entries, and evicting least recent first by the order of docs/model.md#precise-rules.
//   - Index is the fleet-wide block index: for each block key, the active workers holding it
//     and their slots. Holders is one tier's view of it for routing: who holds a block (Append)
//     and how many with what fingerprint (Count), so a walk over a prompt can skip blocks whose
//     holder set did not change.
//   - Prefix is a worker's cached prefix of a prompt in each tier (k1 and k2).
//   - Detach takes a draining worker out of the index (it is no longer a routing candidate or
//     hint source); its caches keep working over a table of their own.
//   - The Prefetch methods touch the memory a coming lookup will probe, so that misses overlap.
//
// Slot numbers (int32) are the only handles the model keeps; everything else (records, tables,
// eviction links) stays inside. The Check methods state the invariants for tests.
package kvcache
