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
import math
import random
from fractions import Fraction

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
# The pattern scenario (build_patterns): a block whose forward stores each
# step's hidden state on the module, a history that forward concatenates
# onto (torch.cat in a helper it calls), caches a forward allocates for
# every layer on its first call, and healthy per-step activations.
KEEP_FWD = F("/app/blocks.py", 57, "forward")  # self._buffers["h%d" % step] = h
LAZY_FWD = F("/app/blocks.py", 30, "forward")  # if self.cache is None: self.cache = torch.zeros(...)
ACT_FWD = F("/app/blocks.py", 61, "forward")   # y = self.proj(x): freed when the step ends
SEQ_FWD = F("/app/blocks.py", 66, "forward")   # scores over the request's tokens: grows, then a new request
HIST_APPEND = F("/app/history.py", 19, "append")  # self.h = torch.cat([self.h, x])
HIST_FWD = F("/app/history.py", 44, "forward")

STACKS = {
    "forward": [CXX, LINEAR, CALL, FORWARD, CALL, SERVE, THREAD, FROZEN],
    "attention": [CXX, EMPTY, ATTN, FORWARD, CALL, SERVE, THREAD, FROZEN],
    "remember": [CXX, EMPTY, REMEMBER, FORWARD, CALL, SERVE, THREAD, FROZEN],
    "weights": [CXX, EMPTY, LOAD, MAIN, FROZEN],
    "kv": [CXX, EMPTY, KV, MAIN, FROZEN],
    "library_only": [CXX, EMPTY, CALL, THREAD],
    "keep": [CXX, EMPTY, KEEP_FWD, CALL, FORWARD, CALL, SERVE, THREAD, FROZEN],
    "lazy": [CXX, EMPTY, LAZY_FWD, CALL, FORWARD, CALL, SERVE, THREAD, FROZEN],
    "act": [CXX, LINEAR, CALL, ACT_FWD, CALL, FORWARD, CALL, SERVE, THREAD, FROZEN],
    "seq": [CXX, EMPTY, SEQ_FWD, CALL, FORWARD, CALL, SERVE, THREAD, FROZEN],
    "hist": [CXX, HIST_APPEND, HIST_FWD, CALL, FORWARD, CALL, SERVE, THREAD, FROZEN],
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


def forward_frame(frames):
    """The innermost frame named forward that is not library code."""
    for f in frames:
        if (f["name"] == "forward" or f["name"].endswith(".forward")) and not is_library(f["filename"]):
            return "%s:%d %s" % (os.path.basename(f["filename"]), f["line"], f["name"])
    return ""


def stack_key(frames):
    return tuple((f["filename"], f["line"], f["name"]) for f in frames)


def leak_analysis(ring, dev):
    """Leak suspects and patterns of one device's ring, from the
    definitions (the package comment of internal/profiles/snapshot):
    a step is one allocation of a stack; kept_across_steps: >= 3 of the
    stack's allocations alive at the end, at least half of them, spread
    over >= 1/4 of the ring, inside a forward; growing_reallocation: >= 3
    allocations, none smaller than the one before and at least half larger,
    at most 2 alive of which the latest, spread over >= 1/4 of the ring,
    inside a forward. A site with a pattern counts all its live
    allocations of the ring; other sites those of the first half."""
    times = [e["time_us"] for e in ring if e.get("time_us")]
    first, end = min(times), max(times)
    mid = first + (end - first) // 2
    span = end - first
    live = {}
    allocs = {}  # stack -> [alloc records]
    for seq, e in enumerate(ring):
        if e["action"] == "alloc":
            k = stack_key(e["frames"])
            rec = {"e": e, "seq": seq, "step": len(allocs.setdefault(k, [])), "stack": k}
            allocs[k].append(rec)
            live[e["addr"]] = rec
        elif e["action"] in ("free_requested", "free_completed"):
            live.pop(e["addr"], None)
    alive = {}
    for rec in live.values():
        alive.setdefault(rec["stack"], []).append(rec)
    found = {}  # site -> pattern
    for k, sv in alive.items():
        al = allocs[k]
        frames = al[0]["e"]["frames"]
        fwd = forward_frame(frames)
        if not fwd:
            continue
        n = len(al)
        pos = [r["e"]["time_us"] for r in sv]
        sizes = [r["e"]["size"] for r in al]
        if len(sv) >= 3 and 2 * len(sv) >= n and 4 * (max(pos) - min(pos)) >= span:
            steps = max(r["step"] for r in sv) - min(r["step"] for r in sv) + 1
            p = {"pattern": "kept_across_steps", "frame": fwd, "steps": steps,
                 "growth_per_step": sum(r["e"]["size"] for r in sv) // steps}
        else:
            inc = sum(1 for a, b in zip(sizes, sizes[1:]) if b > a)
            dec = sum(1 for a, b in zip(sizes, sizes[1:]) if b < a)
            if not (n >= 3 and dec == 0 and 2 * inc >= n - 1 and len(sv) <= 2
                    and any(r["step"] == n - 1 for r in sv)
                    and 4 * (al[-1]["e"]["time_us"] - al[0]["e"]["time_us"]) >= span):
                continue
            # Least-squares slope of size over step 0..n-1, exactly.
            kbar = Fraction(n - 1, 2)
            slope = sum((i - kbar) * s for i, s in enumerate(sizes)) / sum((i - kbar) ** 2 for i in range(n))
            p = {"pattern": "growing_reallocation", "frame": fwd, "steps": n,
                 "growth_per_step": math.floor(slope + Fraction(1, 2))}
        p["bytes"] = sum(r["e"]["size"] for r in sv)
        site = site_of(frames)
        if site not in found or p["bytes"] > found[site]["bytes"]:
            found[site] = p
    leaks = {}
    for rec in live.values():
        e = rec["e"]
        site = site_of(e["frames"])
        if e["time_us"] <= mid or site in found:
            key = "%d|%s" % (dev, site)
            leaks[key] = leaks.get(key, 0) + e["size"]
    patterns = {"%d|%s" % (dev, site): {k: v for k, v in p.items() if k != "bytes"} for site, p in found.items()}
    return leaks, patterns


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


def build_patterns(steps=48, seed=11):
    """One device serving `steps` forward steps with each leak pattern, a
    per-layer cache allocated in the first step (a suspect, not a pattern:
    one step), and healthy activations (neither). Returns the snapshot and
    what the simulation did, which the analysis must find."""
    rng = random.Random(seed)
    d = Device(0, 0x7D0000000000, rng, True)
    for _ in range(4):
        d.alloc(24 * MIB, "weights", record=False)  # before the ring
    d.alloc(40 * MIB, "kv", record=False)
    keep_size, kept = 2 * MIB, []
    hist, hist_sizes, tokens = None, [], 64
    seq_len = 0
    for step in range(steps):
        tid = trace_id(rng)
        meta = "request_id=req-%d trace_id=%s" % (step, tid)
        if step == 0:
            for _ in range(8):  # one cache per layer, at the same line
                d.alloc(1 * MIB, "lazy", meta)
        acts = [d.alloc(4 * MIB, "act", meta)]
        seq_len = seq_len + 1 if step % 5 else 1  # a new request every 5 steps
        acts.append(d.alloc(seq_len * 256 * 1024, "seq", meta))
        h = d.alloc(keep_size, "keep", meta)
        if step < 2:
            acts.append(h)  # the module did not keep them yet
        else:
            kept.append(h)
        # torch.cat([self.h, x]): a larger tensor, then the old one freed.
        tokens += rng.randint(1, 16)
        new = d.alloc(tokens * 16 * 1024, "hist", meta)
        hist_sizes.append(d.live[new]["size"])
        if hist is not None:
            d.free(hist)
        hist = new
        for a in acts:
            d.free(a)
    d.entry("snapshot", 0, 0, "forward", "", [])
    snap = {"segments": d.segments(), "device_traces": [d.trace],
            "allocator_settings": {"PYTORCH_CUDA_ALLOC_CONF": "", "expandable_segments": False},
            "external_annotations": []}
    truth = {"kept_steps": len(kept), "kept_growth": keep_size, "hist_steps": len(hist_sizes),
             "hist_first_last": (hist_sizes[0], hist_sizes[-1])}
    return snap, d, truth


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
    # Leak suspects and patterns (see leak_analysis).
    leaks, patterns = {}, {}
    for dev in devices:
        lk, pt = leak_analysis(snap["device_traces"][dev.index], dev.index)
        leaks.update(lk)
        patterns.update(pt)
    actions = {}
    for ring in snap["device_traces"]:
        for e in ring:
            actions[e["action"]] = actions.get(e["action"], 0) + 1
    return {
        "outstanding_by_site": out,
        "allocator": frag,
        "leaks_by_site": leaks,
        "patterns": patterns,
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
    # The leak patterns, a one-step suspect and healthy sites.
    psnap, pd, truth = build_patterns()
    pexp = expected(psnap, [pd], None)
    pt = pexp["patterns"]
    kept, grow = pt["0|blocks.py:57 forward"], pt["0|history.py:19 append"]
    assert set(pt) == {"0|blocks.py:57 forward", "0|history.py:19 append"}, pt
    assert (kept["pattern"], kept["frame"], kept["steps"], kept["growth_per_step"]) == (
        "kept_across_steps", "blocks.py:57 forward", truth["kept_steps"], truth["kept_growth"]), kept
    assert (grow["pattern"], grow["frame"], grow["steps"]) == ("growing_reallocation", "history.py:44 forward", truth["hist_steps"]), grow
    first, last = truth["hist_first_last"]
    # The fit, not (last - first) / (steps - 1): the growth varies per step.
    assert grow["growth_per_step"] != (last - first) // (truth["hist_steps"] - 1), grow
    assert "0|blocks.py:30 forward" in pexp["leaks_by_site"], pexp["leaks_by_site"]
    pexp["healthy_sites"] = ["0|blocks.py:61 forward", "0|blocks.py:66 forward", "0|model.py:30 load_weights", "0|kv.py:12 allocate_cache"]
    for k in pexp["healthy_sites"]:
        assert k not in pexp["leaks_by_site"] and k not in pt, k
    with open(os.path.join(d, "snapshot_patterns.pickle"), "wb") as f:
        pickle.dump(psnap, f, protocol=4)
    with open(os.path.join(d, "snapshot_patterns.expected.json"), "w") as f:
        json.dump(pexp, f, indent=1, sort_keys=True)
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
