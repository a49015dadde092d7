// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

// Package snapshot imports PyTorch CUDA memory snapshots
// (torch.cuda.memory._dump_snapshot: a pickle; or the same structure
// serialised as JSON, optionally gzip-compressed) into the signals the
// Kineto import emits: llm.profile.memory.outstanding per allocation site,
// the allocator's state per device, leak suspects and OOM events.
//
// # Safe decoding
//
// A snapshot is untrusted input. The pickle is run by a small machine of
// its own (pickle.go) that knows only the opcodes building dicts, lists,
// tuples, strings (str and bytes), ints, floats, booleans and None, plus
// the memo. Any opcode that imports, calls or constructs Python objects
// (GLOBAL, STACK_GLOBAL, REDUCE, INST, OBJ, NEWOBJ, NEWOBJ_EX, BUILD,
// EXT1/2/4, PERSID, BINPERSID, out-of-band buffers) fails the import the
// moment it is read, with an error naming the opcode, the byte offset and
// the file (wrapping ErrRefused). og-rek's Decoder has no option to refuse
// these (it returns Class/Call values) and materialises every dict as a Go
// map, several times the file's size: it is used only by the tests, as an
// independent decoder to check this one against.
//
// Memory stays proportional to the input: dicts are recognised as records
// by their keys as soon as their items are set (trace entries by "action",
// frames by "filename"+"line", segments by "blocks"/"total_size", blocks by
// "state"+"size") and stored as compact structs; frames are interned by
// content and lists of frames as stacks (PyTorch shares them through the
// pickle memo; JSON repeats them); a list of trace entries replays each
// batch of entries as it is appended, so entries are never kept. MaxBytes
// bounds the (decompressed) input and lengths are checked against it before
// anything is allocated. What the decoders build is accounted as it is
// built: holding more than 4 MiB + 8× the input read so far fails the
// import (ErrMemoryBudget, with the limit and the byte offset), so a file
// of opcodes that each build much more than they weigh (millions of empty
// lists) is refused after a few MiB.
//
// # Definitions
//
// Allocation site: the innermost frame of an allocation's stack that is
// not library code, as "file.py:LINE function" (base name of the file).
// Library code: PyTorch ("/torch/", "torch/"), installed packages
// ("site-packages/", "dist-packages/"), the standard library
// ("/lib/python3…", and on Windows "…\Python3NN\Lib\…"), frozen and
// built-in modules ("<frozen …>"), and native frames ("??", .cpp/.cc/.h/
// .cu files, shared libraries: .so, .so.N, .dll, .pyd). Paths recorded on
// Windows (backslashes, drive letters) are read like POSIX ones. A stack of
// library frames only is attributed to its innermost Python frame; a stack
// with no Python frame (recorded with C++ frames only) to its innermost
// native frame outside the unwinder that recorded it (torch::unwind,
// torch::CapturedTraceback), the caching allocator and tensor factories
// (c10::, at::detail::) and the C/Python runtimes (libc, libpython, _Py*,
// Py*), named by its function, and the records say "no Python frames
// recorded (C++ stack only)"; when no such frame is left, or the
// allocation has no frames, the site is "<unknown>". A block without
// frames takes the frames of the trace entry that allocated it at the same
// address, when the ring still has it.
//
// Time: trace entries carry time_us when the history was recorded with
// times. Without it, the records say "time not recorded in the snapshot"
// and carry no incident.start_time, and an OOM record has no event time
// (its observed time is the snapshot's), rather than 1970-01-01.
//
// Outstanding: blocks in state active_allocated when the snapshot was
// taken, summed per (site, device); at most 200 sites per device, the rest
// summed under "<other sites>". Allocated = active_allocated +
// active_pending_free; reserved = Σ segment total_size; largest free block =
// the largest inactive block; fragmentation = (reserved − allocated −
// largest free block) / reserved.
//
// Leak suspects: each device's trace ring is replayed (alloc adds a live
// allocation, free_requested or free_completed removes it). An allocation
// still live at the end of the ring that was allocated in the first half
// of the ring's time span survived at least half the recorded history
// while the program kept allocating and freeing: it is early-and-alive.
// Early-and-alive bytes are summed per (site, device); sites with at least
// MinLeakBytes are reported, largest first, LeakSuspects of them, as WARN
// records with incident.kind=leak_suspect and the attributes of the Kineto
// leak suspects, plus llm.profile.python_stack (the largest allocation's
// frames, innermost first). Memory allocated before the ring started
// (weights, caches) is in the segments but not in the ring, so it is never
// a suspect; the ring's own start-up allocations can be.
//
// Forward frame: the innermost frame of a stack named forward (or a
// qualified name ending in .forward) that is not library code, as
// "file.py:LINE forward": the module forward an allocation is made in.
//
// Step: one allocation of a stack in the ring. A forward frame that
// allocates once per call makes one allocation of the same stack per call,
// so the k-th allocation of a stack is its k-th step: steps are the
// per-stack allocation sequence, not guessed from times or annotations.
// The replay keeps, per (device, stack), a fixed-size record (allocations,
// bytes, how each size compared with the previous one, the sums of a
// least-squares fit of size over step, the first and latest positions) and
// each live allocation's step.
//
// Leak patterns, read per stack with a forward frame and at least 3 steps
// (minPatternSteps), spread over at least a quarter of the ring (by time,
// or by position without times: caches a forward allocates for every layer
// in one call are not steps):
//   - kept_across_steps: at least 3 allocations of the stack are live at
//     the end of the ring and they are at least half of its allocations.
//     Steps = the steps from the first live one to the last; growth per
//     step = their bytes ÷ those steps (rounded down).
//   - growing_reallocation: no allocation of the stack is smaller than the
//     one before, at least half are larger, at most 2 are live and one is
//     the latest (each freed once the next is made). Steps = the stack's
//     allocations in the ring; growth per step = the least-squares slope
//     of size over step (rounded).
//
// A site whose stack shows a pattern (of several, the one holding most) is
// a leak suspect with all its live allocations of the ring, early or not,
// and its record adds llm.profile.leak.pattern, .forward_frame,
// .growth_per_step_bytes and .steps, and says the pattern in its body. A
// site that allocates and frees every step has no live allocation (or one)
// and no pattern; memory allocated before the ring is not in it.
//
// OOM: each "oom" trace entry is an ERROR record (incident.kind=gpu_oom)
// with the requested size, the device's free memory (device_free), and the
// allocator's allocated and reserved bytes at that moment, reconstructed
// from the ring anchored on the final state (the ring starts mid-run).
// The same reconstruction gives llm.profile.memory.total_allocated and
// total_reserved over time (at most ~20,000 points per device, peaks kept).
//
// Trace join: a user_metadata string (or a dict's string values) holding a
// W3C traceparent or a 32-hex trace id, alone or as a "key=value" token,
// sets the TraceID (and, from a traceparent, the SpanID) of the records
// about that allocation.
package snapshot
