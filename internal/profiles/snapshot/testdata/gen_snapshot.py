#!/usr/bin/env python3
"""Writes CUDA memory snapshots in the structure torch.cuda.memory._snapshot()
returns (top-level segments / device_traces / allocator_settings /
external_annotations; segments with blocks; trace entries with frames and
user_metadata), from a small simulated caching allocator, plus the values
the Go importer must find, computed here independently.

    gen_snapshot.py testdata DIR          # the committed test files
    gen_snapshot.py big FILE --mb 120     # a large pickle for bench/snapshot

Frames are dict objects shared between entries (and stacks are shared list
objects for most entries), so pickle writes each once and refers to it
through the memo, as PyTorch's snapshots do.
"""
import argparse
import gzip
import json
import os
import pickle
import random

MIB = 1 << 20
T0 = 1_760_000_000_000_000  # epoch µs

# Frames, innermost first, as PyTorch gathers them.
def F(filename, line, name):
    return {"filename": filename, "line": line, "name": name}

CXX = F("??", 0, "c10::cuda::CUDACachingAllocator::Native::DeviceCachingAllocator::malloc")
EMPTY = F("/usr/lib/python3/dist-packages/torch/_tensor.py", 1400, "empty")
LINEAR = F("/usr/lib/python3/dist-packages/torch/nn/modules/linear.py", 125, "forward")
CALL = F("/usr/lib/python3/dist-packages/torch/nn/modules/module.py", 1736, "_call_impl")
THREAD = F("/usr/lib/python3.11/threading.py", 1045, "run")
FROZEN = F("<frozen runpy>", 88, "_run_code")
FORWARD = F("/app/model.py", 212, "forward")
ATTN = F("/app/model.py", 140, "attention")
REMEMBER = F("/app/model.py", 88, "remember")
SERVE = F("/app/serve.py", 40, "handle_request")
LOAD = F("/app/model.py", 30, "load_weights")
KV = F("/app/kv.py", 12, "allocate_cache")
MAIN = F("/app/serve.py", 200, "main")

STACKS = {
    "forward": [CXX, LINEAR, CALL, FORWARD, CALL, SERVE, THREAD, FROZEN],
    "attention": [CXX, EMPTY, ATTN, FORWARD, CALL, SERVE, THREAD, FROZEN],
    "remember": [CXX, EMPTY, REMEMBER, FORWARD, CALL, SERVE, THREAD, FROZEN],
    "weights": [CXX, EMPTY, LOAD, MAIN, FROZEN],
    "kv": [CXX, EMPTY, KV, MAIN, FROZEN],
    "library_only": [CXX, EMPTY, CALL, THREAD],
}


def is_library(filename):
    """The importer's rule, written again here from its definition."""
    if filename in ("", "??") or filename.startswith("<frozen") or filename.startswith("<built-in"):
        return True
    if "/torch/" in filename or filename.startswith("torch/") or "site-packages/" in filename or "dist-packages/" in filename:
        return True
    if "/lib/python3" in filename or "/lib64/python3" in filename or "/lib/python2" in filename:
        return True
    return os.path.splitext(filename)[1] in (".cpp", ".cc", ".cxx", ".c", ".h", ".hpp", ".cu", ".cuh", ".so")


def site_of(frames):
    if not frames:
        return "<unknown>"
    pick = next((f for f in frames if not is_library(f["filename"])), frames[0])
    return "%s:%d %s" % (os.path.basename(pick["filename"]), pick["line"], pick["name"])


class Device:
    """A bump allocator over 32 MiB segments (large ones for big blocks);
    a segment whose blocks are all free is released (segment_free)."""

    SEG = 32 * MIB

    def __init__(self, index, base, rng, share_stacks):
        self.index, self.rng, self.share = index, rng, share_stacks
        self.next_base = base
        self.segs = []  # dicts: address, size, used, live count
        self.live = {}  # addr -> (size, requested, frames, time, state)
        self.trace = []
        self.t = T0

    def frames(self, kind):
        st = STACKS[kind]
        return st if self.share else list(st)  # new list objects, same frame dicts

    def _segment(self, size):
        seg_size = max(self.SEG, (size + MIB - 1) // MIB * MIB)
        seg = {"address": self.next_base, "size": seg_size, "used": 0, "live": 0, "blocks": []}
        self.next_base += seg_size + 2 * MIB
        self.segs.append(seg)
        return seg

    def alloc(self, size, kind, meta="", record=True):
        size = (size + 511) // 512 * 512
        seg = self.segs[-1] if self.segs else None
        if seg is None or seg["used"] + size > seg["size"]:
            seg = self._segment(size)
            if record:
                self.entry("segment_alloc", seg["address"], seg["size"], kind, meta)
        addr = seg["address"] + seg["used"]
        seg["used"] += size
        seg["live"] += 1
        seg["blocks"].append(addr)
        fr = self.frames(kind)
        self.live[addr] = {"size": size, "requested": size - self.rng.randrange(0, 512), "frames": fr,
                           "time": self.t, "state": "active_allocated", "seg": seg, "kind": kind}
        if record:
            self.entry("alloc", addr, size, kind, meta, fr)
        return addr

    def free(self, addr, complete=True):
        b = self.live[addr]
        self.entry("free_requested", addr, b["size"], b["kind"], "", b["frames"])
        if not complete:
            b["state"] = "active_pending_free"
            return
        self.entry("free_completed", addr, b["size"], b["kind"], "", b["frames"])
        del self.live[addr]
        seg = b["seg"]
        seg["live"] -= 1
        if seg["live"] == 0 and seg is not self.segs[-1]:
            self.segs.remove(seg)
            self.entry("segment_free", seg["address"], seg["size"], b["kind"], "")

    def entry(self, action, addr, size, kind, meta, frames=None, **extra):
        self.t += self.rng.randrange(5, 40)
        e = {"action": action, "addr": addr, "size": size, "stream": 0, "time_us": self.t,
             "frames": frames if frames is not None else self.frames(kind), "user_metadata": meta}
        e.update(extra)
        self.trace.append(e)
        return e

    def segments(self):
        """Segments and blocks as the snapshot lists them: live blocks, and
        the free space between and after them as inactive blocks."""
        out = []
        for seg in self.segs:
            blocks, pos = [], seg["address"]
            end = seg["address"] + seg["size"]
            live = sorted(a for a in seg["blocks"] if a in self.live)
            for a in live:
                if a > pos:
                    blocks.append({"address": pos, "size": a - pos, "requested_size": 0, "state": "inactive", "frames": []})
                b = self.live[a]
                blocks.append({"address": a, "size": b["size"], "requested_size": b["requested"], "state": b["state"], "frames": b["frames"]})
                pos = a + b["size"]
            if pos < end:
                blocks.append({"address": pos, "size": end - pos, "requested_size": 0, "state": "inactive", "frames": []})
            allocated = sum(b["size"] for b in blocks if b["state"] != "inactive")
            active = sum(b["size"] for b in blocks if b["state"] == "active_allocated")
            out.append({"device": self.index, "address": seg["address"], "total_size": seg["size"],
                        "allocated_size": allocated, "active_size": active,
                        "requested_size": sum(b["requested_size"] for b in blocks if b["state"] != "inactive"),
                        "stream": 0, "segment_type": "large", "segment_pool_id": (0, 0),
                        "is_expandable": False, "frames": [], "blocks": blocks})
        return out


def trace_id(rng):
    return "%032x" % rng.getrandbits(128)


def build(steps, leak_every, seed=1, share_stacks=True):
    rng = random.Random(seed)
    d0 = Device(0, 0x7F0000000000, rng, share_stacks)
    d1 = Device(1, 0x7E0000000000, rng, share_stacks)
    # Before the ring: weights and the KV cache (in segments only).
    for i in range(6):
        d0.alloc(24 * MIB, "weights", record=False)
    d0.alloc(40 * MIB, "kv", record=False)
    d1.alloc(24 * MIB, "weights", record=False)
    ids = {}
    oom_tid = None
    for step in range(steps):
        tid = trace_id(rng)
        meta = "request_id=req-%d trace_id=%s" % (step, tid) if step % 3 == 0 else ""
        acts = [d0.alloc(rng.choice([1, 2, 3]) * MIB + rng.randrange(0, 4096), "forward", meta) for _ in range(3)]
        acts.append(d0.alloc(512 * 1024, "attention", meta))
        if step % leak_every == 0:
            d0.alloc(2 * MIB, "remember", meta)
            ids.setdefault("remember", meta)
        if step % 7 == 0:
            d0.alloc(64 * 1024, "library_only", meta)  # freed below
            acts.append(max(d0.live))
        for a in acts:
            d0.free(a)
        x = d1.alloc(3 * MIB, "forward")
        d1.free(x)
        if step == steps // 2:
            oom_tid = trace_id(rng)
            d0.entry("oom", 0, 6 << 30, "forward", "00-%s-00f067aa0ba902b7-01" % oom_tid,
                     STACKS["forward"], device_free=300 * MIB)
            del d0.trace[-1]["addr"]  # PyTorch writes device_free instead of addr
    # One tensor freed by the program but waiting for its stream.
    p = d0.alloc(1 * MIB, "forward")
    d0.free(p, complete=False)
    d0.entry("snapshot", 0, 0, "forward", "", [])
    snap = {
        "segments": d0.segments() + d1.segments(),
        "device_traces": [d0.trace, d1.trace],
        "allocator_settings": {"PYTORCH_CUDA_ALLOC_CONF": "", "max_split_size": -1,
                               "garbage_collection_threshold": 0.0, "expandable_segments": False,
                               "roundup_power2_divisions": {"1": 0}},
        "external_annotations": [{"device": 0, "stage": "START", "name": "step", "time_us": T0}],
    }
    return snap, d0, d1, oom_tid


def expected(snap, devices, oom_tid):
    out = {}
    frag = {}
    for seg in snap["segments"]:
        d = str(seg["device"])
        f = frag.setdefault(d, {"reserved": 0, "allocated": 0, "largest_free": 0})
        f["reserved"] += seg["total_size"]
        for b in seg["blocks"]:
            if b["state"] == "active_allocated":
                k = "%s|%s" % (d, site_of(b["frames"]))
                out[k] = out.get(k, 0) + b["size"]
            if b["state"] != "inactive":
                f["allocated"] += b["size"]
            else:
                f["largest_free"] = max(f["largest_free"], b["size"])
    for f in frag.values():
        f["fragmentation"] = (f["reserved"] - f["allocated"] - f["largest_free"]) / f["reserved"]
    # Leak suspects: allocations alive at the end of a ring, allocated in
    # its first half (by time), grouped by site.
    leaks = {}
    for dev in devices:
        ring = snap["device_traces"][dev.index]
        times = [e["time_us"] for e in ring]
        mid = min(times) + (max(times) - min(times)) // 2
        live = {}
        for e in ring:
            if e["action"] == "alloc":
                live[e["addr"]] = e
            elif e["action"] in ("free_requested", "free_completed"):
                live.pop(e["addr"], None)
        for e in live.values():
            if e["time_us"] <= mid:
                k = "%d|%s" % (dev.index, site_of(e["frames"]))
                leaks[k] = leaks.get(k, 0) + e["size"]
    actions = {}
    for ring in snap["device_traces"]:
        for e in ring:
            actions[e["action"]] = actions.get(e["action"], 0) + 1
    return {
        "outstanding_by_site": out,
        "allocator": frag,
        "leaks_by_site": leaks,
        "oom_trace_id": oom_tid,
        "segments": len(snap["segments"]),
        "blocks": sum(len(s["blocks"]) for s in snap["segments"]),
        "trace_entries": sum(len(r) for r in snap["device_traces"]),
        "entries_by_action": actions,
    }


class Evil:
    """pickle.dumps(Evil()) is GLOBAL/STACK_GLOBAL os.system + REDUCE."""

    def __reduce__(self):
        return (os.system, ("echo pwned",))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("mode", choices=["testdata", "big"])
    ap.add_argument("out")
    ap.add_argument("--mb", type=int, default=120)
    args = ap.parse_args()
    if args.mode == "big":
        # ~1 KB of pickle per step; a leak every 50 steps.
        steps = args.mb * 1000
        snap, _, _, _ = build(steps, 50, seed=7)
        with open(args.out, "wb") as f:
            pickle.dump(snap, f, protocol=2)
        return
    d = args.out
    os.makedirs(d, exist_ok=True)
    snap, d0, d1, oom_tid = build(120, 10)
    exp = expected(snap, [d0, d1], oom_tid)
    for proto in (2, 4, 5):
        with open(os.path.join(d, "snapshot_p%d.pickle" % proto), "wb") as f:
            pickle.dump(snap, f, protocol=proto)
    with open(os.path.join(d, "snapshot.expected.json"), "w") as f:
        json.dump(exp, f, indent=1, sort_keys=True)
    # The same snapshot as JSON (tuples become lists), gzip-compressed.
    with gzip.GzipFile(os.path.join(d, "snapshot.json.gz"), "wb", mtime=0) as f:
        f.write(json.dumps(snap).encode())
    # Stacks not shared between entries (frames still are).
    snap2, _, _, _ = build(30, 10, seed=3, share_stacks=False)
    with open(os.path.join(d, "snapshot_unshared.pickle"), "wb") as f:
        pickle.dump(snap2, f, protocol=4)
    # Before PyTorch 2.0: a bare list of segments.
    with open(os.path.join(d, "legacy_segments.pickle"), "wb") as f:
        pickle.dump(snap["segments"], f, protocol=2)
    with open(os.path.join(d, "malicious.pickle"), "wb") as f:
        pickle.dump({"segments": [], "device_traces": [Evil()]}, f, protocol=2)
    with open(os.path.join(d, "malicious_p4.pickle"), "wb") as f:
        pickle.dump(Evil(), f, protocol=4)


if __name__ == "__main__":
    main()
