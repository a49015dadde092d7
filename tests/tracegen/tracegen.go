// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

// Package tracegen writes synthetic PyTorch profiler (Kineto) traces for the
// end-to-end tests of the profile import and root-cause components: a
// decoder-only transformer (Hugging Face naming, LlamaForCausalLM by
// default) run for a few profiler steps, in the Chrome-trace JSON that
// current Kineto writes (schemaVersion, deviceProperties, distributedInfo,
// baseTimeNanoseconds, trace_id and traceEvents with ph X, i, s, f and M).
//
// What one step contains, as torch.profiler with record_shapes, with_stack,
// with_modules and profile_memory records it:
//
//   - a ProfilerStep#N user annotation;
//   - python_function frames: "torch/nn/modules/module.py(1762): _call_impl"
//     around every "nn.Module: <Class>_<n>" frame (n counts the instances of
//     a class in the order they are first called, as PyTorch's Python
//     tracer numbers them), linked by "Python id" / "Python parent id";
//   - cpu_op events (aten::linear > aten::mm, aten::scaled_dot_product_attention,
//     ...) with "External id" and "Input Dims";
//   - cuda_runtime cudaLaunchKernel / cudaMemcpyAsync with a "correlation",
//     the kernel or memcpy on the GPU (pid = device, tid = stream) with the
//     same correlation, and the ac2g flow (s on the launch, f on the kernel);
//   - cpu_instant_event "[memory]" events (Addr, Bytes, Total Allocated,
//     Total Reserved, Device Type 1, Device Id) for every activation an op
//     allocates on the GPU, freed again (negative Bytes, same Addr) when its
//     decoder layer (or the step) ends, plus a host allocation (Device Type 0).
//
// Module paths. The importer (receiver/profileimportreceiver) names a layer
// by the chain of nn.Module frames above an event, joined by '/', each frame
// named by what follows "nn.Module: ". With the default model class the
// paths are
//
//	LlamaForCausalLM_0/LlamaModel_0/LlamaDecoderLayer_<i>/LlamaAttention_<i>
//	LlamaForCausalLM_0/LlamaModel_0/LlamaDecoderLayer_<i>/LlamaMLP_<i>
//	LlamaForCausalLM_0/LlamaModel_0/LlamaDecoderLayer_<i>/LlamaAttention_<i>/Linear_<n>
//
// (decoder layers count from 0). Activations are allocated inside the
// Linear/norm/activation modules and the attention itself, and all of them
// are freed before their layer returns.
//
// The leak. Options.Leak names a module by a path fragment, matched against
// whole trailing components of the module paths ("LlamaAttention_12" or
// "LlamaDecoderLayer_12/LlamaAttention_12"). In every step the first module
// that matches runs one more op directly in its own frame, aten::cat (a
// key/value cache appended to a list that is never trimmed), which
// allocates Leak.BytesPerStep on the GPU and never frees them. The importer
// therefore attributes the outstanding memory to exactly that module's path
// (for Leak.Module "LlamaAttention_12" with the default model class:
// "LlamaForCausalLM_0/LlamaModel_0/LlamaDecoderLayer_12/LlamaAttention_12"),
// which Info.LeakModulePath reports, and points the leak suspect at the
// aten::cat span. Everything else is freed, so a trace without a leak has
// no leak suspect at all.
//
// The times are real: Options.Start places the first event, so a test can
// put the profiling window at "now", overlapping the incident it provokes.
package tracegen

import (
	"bufio"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Options describe the trace to write. Zero fields take the defaults
// documented on each.
type Options struct {
	// Pid is the profiled process (default 1). The importer reports it as
	// the trace's process.pid, which is what links the profile to the
	// process NVML sees on the GPU.
	Pid int64
	// Tid is the thread running the model (default Pid, the main thread).
	Tid int64
	// ProcessName is the "process_name" metadata of Pid (default "python3").
	ProcessName string
	// Start is the wall-clock time of the first event (default time.Now()).
	Start time.Time
	// ModelClass is the top nn.Module class (default "LlamaForCausalLM").
	// Its prefix before "ForCausalLM" names the inner classes (LlamaModel,
	// LlamaDecoderLayer, LlamaAttention, LlamaMLP, LlamaRMSNorm).
	ModelClass string
	// Layers is the number of decoder layers (default 4).
	Layers int
	// Steps is the number of profiler steps (default 4).
	Steps int
	// Device is the CUDA device index of kernels and [memory] events
	// (default 0) and Stream the CUDA stream of the kernels (default 7).
	Device, Stream int
	// GPUName goes into deviceProperties (default "NVIDIA A100-SXM4-80GB").
	GPUName string
	// Tokens is the batch's token count, which sizes activations (default
	// 256; hidden size 4096, MLP 11008 and vocabulary 32000 are fixed, as in
	// Llama-2-7B in bfloat16).
	Tokens int
	// TraceID is Kineto's trace_id, 32 hex digits (default derived from
	// the other options). The importer uses it as the OTLP trace id.
	TraceID string
	// Leak, when set, makes one module allocate without freeing.
	Leak *Leak
}

// Leak describes GPU memory one module allocates in every step and never
// frees.
type Leak struct {
	// Module is a module path fragment: one or more trailing components of
	// a module path, e.g. "LlamaAttention_12".
	Module string
	// BytesPerStep is allocated once per step (default 64 MiB).
	BytesPerStep int64
}

// Info describes a written trace.
type Info struct {
	// TraceID is the trace's id in lower-case hex, as OTLP shows it.
	TraceID string
	// Start and End bound the profiling window (first and last event).
	Start, End time.Time
	// BaseTimeNanoseconds is the file's baseTimeNanoseconds: each "ts" (µs)
	// is relative to it.
	BaseTimeNanoseconds int64
	// Events is the number of traceEvents entries.
	Events int
	// ModulePaths lists every module path of the trace, in call order.
	ModulePaths []string
	// LeakModulePath is the full path of the leaking module ("" without a
	// leak), and LeakBytes what it still holds at the end of the window.
	LeakModulePath string
	LeakBytes      int64
}

// Model dimensions (Llama-2-7B, bfloat16).
const (
	hidden       = 4096
	intermediate = 11008
	vocab        = 32000
	bytesPerElem = 2
	mib          = 1 << 20
)

func (o *Options) defaults() error {
	if o.Pid == 0 {
		o.Pid = 1
	}
	if o.Tid == 0 {
		o.Tid = o.Pid
	}
	if o.ProcessName == "" {
		o.ProcessName = "python3"
	}
	if o.Start.IsZero() {
		o.Start = time.Now()
	}
	if o.ModelClass == "" {
		o.ModelClass = "LlamaForCausalLM"
	}
	if o.Layers == 0 {
		o.Layers = 4
	}
	if o.Steps == 0 {
		o.Steps = 4
	}
	if o.Stream == 0 {
		o.Stream = 7
	}
	if o.GPUName == "" {
		o.GPUName = "NVIDIA A100-SXM4-80GB"
	}
	if o.Tokens == 0 {
		o.Tokens = 256
	}
	switch {
	case o.Pid < 0 || o.Tid < 0:
		return errors.New("tracegen: pid and tid must be positive")
	case o.Layers < 0 || o.Steps < 0 || o.Tokens < 0 || o.Device < 0 || o.Stream < 0:
		return errors.New("tracegen: layers, steps, tokens, device and stream must not be negative")
	case strings.ContainsAny(o.ModelClass, "/ "):
		return fmt.Errorf("tracegen: model class %q must be a class name", o.ModelClass)
	}
	if o.Leak != nil {
		l := *o.Leak // do not modify the caller's value
		if l.BytesPerStep == 0 {
			l.BytesPerStep = 64 * mib
		}
		l.Module = strings.Trim(l.Module, "/")
		if l.Module == "" || l.BytesPerStep < 0 {
			return errors.New("tracegen: a leak needs a module path fragment and positive bytes per step")
		}
		o.Leak = &l
	}
	if o.TraceID == "" {
		h := sha256.Sum256(fmt.Appendf(nil, "%d/%d/%d/%s/%d/%d", o.Pid, o.Tid, o.Start.UnixNano(), o.ModelClass, o.Layers, o.Steps))
		o.TraceID = strings.ToUpper(hex.EncodeToString(h[:16]))
	}
	if b, err := hex.DecodeString(o.TraceID); err != nil || len(b) != 16 {
		return fmt.Errorf("tracegen: trace id %q is not 32 hex digits", o.TraceID)
	}
	return nil
}

// arg is one "args" member; v is an int, int64, float64, string or
// json.RawMessage.
type arg struct {
	k string
	v any
}

// event is one traceEvents entry. Times are ns relative to the base time.
type event struct {
	ph, cat, name string
	pid, tid      any // int64 or string (Kineto's "Spans"/"Traces" rows)
	ts, dur       int64
	hasDur        bool
	id            int64  // flows
	bp            string // flow end binding point
	scope         string // instant events: "s"
	args          []arg
	evIdx         bool // Kineto numbers CPU-side events with "Ev Idx"
}

type alloc struct {
	addr, bytes int64
}

// gen holds the state of one trace being built.
type gen struct {
	o Options

	cpu, gpu []event // CPU-side events (and flow starts); GPU activity (and flow ends)
	now      int64   // CPU cursor, ns from base
	gpuNow   int64   // when the stream is free again

	pyID, extID, corr int64
	pyStack           []int64 // Python ids of the open frames
	path              []string

	instances  map[string]int // module instance key -> its number within its class
	perClass   map[string]int
	pathsSeen  map[string]bool
	paths      []string
	leakStep   bool // the leak ran in the current step
	leakPath   string
	leakBytes  int64
	stepAllocs []alloc // freed at the end of the step
	layer      []alloc // freed at the end of the current decoder layer

	nextAddr, allocated, reserved int64
}

// Write writes the trace described by o to w as JSON.
func Write(w io.Writer, o Options) (Info, error) {
	if err := o.defaults(); err != nil {
		return Info{}, err
	}
	g := &gen{o: o, instances: map[string]int{}, perClass: map[string]int{}, pathsSeen: map[string]bool{}}
	base := o.Start.Truncate(time.Second).UnixNano()
	g.now = o.Start.UnixNano() - base
	g.gpuNow = g.now
	// The weights are resident before profiling starts: the allocator's
	// totals begin there, as in a real trace taken mid-serving.
	g.allocated = int64(o.Layers)*200*mib + 1024*mib
	g.reserved = roundUp(g.allocated, 20*mib) + 512*mib
	g.nextAddr = 0x7f3a_0000_0000

	first := g.now
	for s := 0; s < o.Steps; s++ {
		g.leakStep = false
		g.step(s)
		if o.Leak != nil && !g.leakStep {
			return Info{}, fmt.Errorf("tracegen: leak module %q matches no module path (paths look like %q)", o.Leak.Module, g.paths[len(g.paths)-1])
		}
		g.now += 1_500_000 // the scheduler's host work between two forward passes
	}
	last := max(g.now, g.gpuNow)

	bw := bufio.NewWriterSize(w, 64<<10)
	n, err := g.write(bw, base, first, last)
	if err == nil {
		err = bw.Flush()
	}
	if err != nil {
		return Info{}, err
	}
	return Info{
		TraceID:             strings.ToLower(o.TraceID),
		Start:               time.Unix(0, base+first),
		End:                 time.Unix(0, base+last),
		BaseTimeNanoseconds: base,
		Events:              n,
		ModulePaths:         g.paths,
		LeakModulePath:      g.leakPath,
		LeakBytes:           g.leakBytes,
	}, nil
}

// WriteFile writes the trace to path, gzip-compressed when path ends in
// ".gz". As Kineto does, it writes path+".tmp" and renames it when
// complete, so a directory watcher never sees a partial file under path.
func WriteFile(path string, o Options) (Info, error) {
	tmp := path + ".tmp"
	f, err := os.Create(tmp)
	if err != nil {
		return Info{}, err
	}
	var w io.Writer = f
	var zw *gzip.Writer
	if strings.HasSuffix(path, ".gz") {
		zw = gzip.NewWriter(f)
		zw.Name = strings.TrimSuffix(filepath.Base(path), ".gz")
		w = zw
	}
	info, err := Write(w, o)
	if err == nil && zw != nil {
		err = zw.Close()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		_ = os.Remove(tmp)
		return Info{}, err
	}
	return info, nil
}

func roundUp(n, to int64) int64 { return (n + to - 1) / to * to }

// classes returns the inner class names for the model class.
func (g *gen) class(suffix string) string {
	return strings.TrimSuffix(g.o.ModelClass, "ForCausalLM") + suffix
}

func (g *gen) step(s int) {
	g.extID++
	ann := g.open(event{ph: "X", cat: "user_annotation", name: "ProfilerStep#" + strconv.Itoa(s), evIdx: true,
		args: []arg{{"External id", g.extID}, {"Record function id", 0}}})
	g.now += 3_000
	// torch.no_grad's decorator frame wraps the forward pass in inference.
	py := g.pyFrame("torch/utils/_contextlib.py(116): decorate_context", nil)
	g.module(g.o.ModelClass, "", func() {
		g.module(g.class("Model"), "model", func() {
			g.module("Embedding", "model.embed_tokens", func() {
				g.op("aten::embedding", dims([]int{g.o.Tokens}, []int{vocab, hidden}), func() {
					g.kernelOp("aten::index_select", dims([]int{vocab, hidden}, nil, []int{g.o.Tokens}),
						g.act(hidden), "void at::native::(anonymous namespace)::indexSelectLargeIndex<c10::BFloat16, long, unsigned int, 2, 2, -2, true>(at::cuda::detail::TensorInfo<c10::BFloat16, unsigned int>, at::cuda::detail::TensorInfo<c10::BFloat16, unsigned int>, at::cuda::detail::TensorInfo<long, unsigned int>, int, int, unsigned int, unsigned int, long)", 9_000, &g.stepAllocs)
				})
			})
			g.module(g.class("RotaryEmbedding"), "model.rotary_emb", func() {
				g.kernelOp("aten::cos", dims([]int{1, g.o.Tokens, 128}), int64(g.o.Tokens)*128*4,
					"void at::native::vectorized_elementwise_kernel<4, at::native::cos_kernel_cuda(at::TensorIteratorBase&)::{lambda()#2}::operator()() const::{lambda()#2}::operator()() const::{lambda(float)#1}, std::array<char*, 2ul> >(int, at::native::cos_kernel_cuda(at::TensorIteratorBase&)::{lambda()#2}::operator()() const::{lambda()#2}::operator()() const::{lambda(float)#1}, std::array<char*, 2ul>)", 3_000, &g.stepAllocs)
			})
			for i := 0; i < g.o.Layers; i++ {
				g.decoderLayer(i)
			}
			g.norm("model.norm", &g.stepAllocs)
		})
		g.linear("lm_head", hidden, vocab, &g.stepAllocs)
	})
	g.close(py)
	// Sampling: the next tokens come back to the host.
	g.kernelOp("aten::argmax", dims([]int{g.o.Tokens, vocab}, nil, nil), int64(g.o.Tokens)*8,
		"void at::native::reduce_kernel<512, 1, at::native::ReduceOp<c10::BFloat16, at::native::ArgMaxOps<c10::BFloat16>, unsigned int, long, 4> >(at::native::ReduceOp<c10::BFloat16, at::native::ArgMaxOps<c10::BFloat16>, unsigned int, long, 4>)", 21_000, &g.stepAllocs)
	g.op("aten::to", dims([]int{g.o.Tokens}, nil, nil, nil, nil), func() {
		g.op("aten::_to_copy", dims([]int{g.o.Tokens}, nil, nil, nil, nil, nil, nil), func() {
			g.hostAlloc(int64(g.o.Tokens) * 8)
			g.op("aten::copy_", dims([]int{g.o.Tokens}, []int{g.o.Tokens}, nil), func() {
				g.memcpy(int64(g.o.Tokens) * 8)
			})
		})
	})
	for _, a := range g.stepAllocs {
		g.free(a)
	}
	g.stepAllocs = g.stepAllocs[:0]
	g.now += 2_000
	g.close(ann)
}

func (g *gen) decoderLayer(i int) {
	key := "model.layers." + strconv.Itoa(i)
	g.module(g.class("DecoderLayer"), key, func() {
		g.norm(key+".input_layernorm", &g.layer)
		g.module(g.class("Attention"), key+".self_attn", func() {
			for _, p := range []string{"q_proj", "k_proj", "v_proj"} {
				g.linear(key+".self_attn."+p, hidden, hidden, &g.layer)
			}
			// Rotary position embedding, applied in the attention's own frame.
			g.kernelOp("aten::mul", dims([]int{1, 32, g.o.Tokens, 128}, []int{1, 1, g.o.Tokens, 128}), g.act(hidden),
				"void at::native::elementwise_kernel<128, 2, at::native::gpu_kernel_impl_nocast<at::native::BinaryFunctor<c10::BFloat16, c10::BFloat16, c10::BFloat16, at::native::binary_internal::MulFunctor<float> > >(at::TensorIteratorBase&, at::native::BinaryFunctor<c10::BFloat16, c10::BFloat16, c10::BFloat16, at::native::binary_internal::MulFunctor<float> > const&)::{lambda(int)#1}>(int, at::native::gpu_kernel_impl_nocast<at::native::BinaryFunctor<c10::BFloat16, c10::BFloat16, c10::BFloat16, at::native::binary_internal::MulFunctor<float> > >(at::TensorIteratorBase&, at::native::BinaryFunctor<c10::BFloat16, c10::BFloat16, c10::BFloat16, at::native::binary_internal::MulFunctor<float> > const&)::{lambda(int)#1})", 6_000, &g.layer)
			g.op("aten::scaled_dot_product_attention", dims([]int{1, 32, g.o.Tokens, 128}, []int{1, 32, g.o.Tokens, 128}, []int{1, 32, g.o.Tokens, 128}, nil, nil, nil, nil), func() {
				g.kernelOp("aten::_scaled_dot_product_flash_attention", dims([]int{1, 32, g.o.Tokens, 128}, []int{1, 32, g.o.Tokens, 128}, []int{1, 32, g.o.Tokens, 128}, nil, nil, nil, nil),
					g.act(hidden), "void pytorch_flash::flash_fwd_kernel<Flash_fwd_kernel_traits<128, 128, 64, 4, false, false, cutlass::bfloat16_t, Flash_kernel_traits<128, 128, 64, 4, cutlass::bfloat16_t> >, false, true, false, false, true, true, false, false>(pytorch_flash::Flash_fwd_params)", 48_000, &g.layer)
			})
			g.linear(key+".self_attn.o_proj", hidden, hidden, &g.layer)
		})
		g.residual()
		g.norm(key+".post_attention_layernorm", &g.layer)
		g.module(g.class("MLP"), key+".mlp", func() {
			g.linear(key+".mlp.gate_proj", hidden, intermediate, &g.layer)
			g.module("SiLU", key+".mlp.act_fn", func() {
				g.kernelOp("aten::silu", dims([]int{g.o.Tokens, intermediate}), g.act(intermediate),
					"void at::native::vectorized_elementwise_kernel<4, at::native::(anonymous namespace)::silu_kernel(at::TensorIteratorBase&)::{lambda()#1}::operator()() const::{lambda()#4}::operator()() const::{lambda(c10::BFloat16)#1}, std::array<char*, 2ul> >(int, at::native::(anonymous namespace)::silu_kernel(at::TensorIteratorBase&)::{lambda()#1}::operator()() const::{lambda()#4}::operator()() const::{lambda(c10::BFloat16)#1}, std::array<char*, 2ul>)", 11_000, &g.layer)
			})
			g.linear(key+".mlp.up_proj", hidden, intermediate, &g.layer)
			g.kernelOp("aten::mul", dims([]int{g.o.Tokens, intermediate}, []int{g.o.Tokens, intermediate}), g.act(intermediate),
				"void at::native::vectorized_elementwise_kernel<4, at::native::BinaryFunctor<c10::BFloat16, c10::BFloat16, c10::BFloat16, at::native::binary_internal::MulFunctor<float> >, std::array<char*, 3ul> >(int, at::native::BinaryFunctor<c10::BFloat16, c10::BFloat16, c10::BFloat16, at::native::binary_internal::MulFunctor<float> >, std::array<char*, 3ul>)", 12_000, &g.layer)
			g.linear(key+".mlp.down_proj", intermediate, hidden, &g.layer)
		})
		g.residual()
		// The layer's activations die when it returns: frees land in its frame.
		for _, a := range g.layer {
			g.free(a)
		}
		g.layer = g.layer[:0]
	})
}

func (g *gen) residual() {
	g.kernelOp("aten::add", dims([]int{g.o.Tokens, hidden}, []int{g.o.Tokens, hidden}, nil), g.act(hidden),
		"void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<c10::BFloat16>, std::array<char*, 3ul> >(int, at::native::CUDAFunctor_add<c10::BFloat16>, std::array<char*, 3ul>)", 7_000, &g.layer)
}

func (g *gen) norm(key string, into *[]alloc) {
	g.module(g.class("RMSNorm"), key, func() {
		g.kernelOp("aten::pow", dims([]int{g.o.Tokens, hidden}, nil), int64(g.o.Tokens)*hidden*4,
			"void at::native::vectorized_elementwise_kernel<4, at::native::(anonymous namespace)::pow_tensor_scalar_kernel_impl<float, float>(at::TensorIteratorBase&, float)::{lambda(float)#1}, std::array<char*, 2ul> >(int, at::native::(anonymous namespace)::pow_tensor_scalar_kernel_impl<float, float>(at::TensorIteratorBase&, float)::{lambda(float)#1}, std::array<char*, 2ul>)", 5_000, into)
		g.kernelOp("aten::mul", dims([]int{hidden}, []int{g.o.Tokens, hidden}), g.act(hidden),
			"void at::native::vectorized_elementwise_kernel<4, at::native::BinaryFunctor<c10::BFloat16, c10::BFloat16, c10::BFloat16, at::native::binary_internal::MulFunctor<float> >, std::array<char*, 3ul> >(int, at::native::BinaryFunctor<c10::BFloat16, c10::BFloat16, c10::BFloat16, at::native::binary_internal::MulFunctor<float> >, std::array<char*, 3ul>)", 5_000, into)
	})
}

func (g *gen) linear(key string, in, out int, into *[]alloc) {
	g.module("Linear", key, func() {
		g.op("aten::linear", dims([]int{g.o.Tokens, in}, []int{out, in}, nil), func() {
			g.op("aten::t", dims([]int{out, in}), nil)
			g.kernelOp("aten::mm", dims([]int{g.o.Tokens, in}, []int{in, out}), g.act(out),
				"ampere_bf16_s16816gemm_bf16_128x128_ldg8_f2f_stages_64x3_tn", int64(in)*int64(out)/1_000_000*3_000+4_000, into)
		})
	})
}

// act is the size of a [tokens, n] bfloat16 activation.
func (g *gen) act(n int) int64 { return int64(g.o.Tokens) * int64(n) * bytesPerElem }

// module runs body inside an nn.Module frame (and its _call_impl frame).
// key identifies the module instance, so a module keeps its number across
// steps as it does in PyTorch.
func (g *gen) module(class, key string, body func()) {
	inst, ok := g.instances[key+"|"+class]
	if !ok {
		inst = g.perClass[class]
		g.perClass[class]++
		g.instances[key+"|"+class] = inst
	}
	name := class + "_" + strconv.Itoa(inst)
	call := g.pyFrame("torch/nn/modules/module.py(1762): _call_impl", nil)
	g.now += 400
	mod := g.pyFrame("nn.Module: "+name, []arg{{"Python module id", inst}})
	g.path = append(g.path, name)
	p := strings.Join(g.path, "/")
	if !g.pathsSeen[p] {
		g.pathsSeen[p] = true
		g.paths = append(g.paths, p)
	}
	g.now += 1_500
	body()
	if l := g.o.Leak; l != nil && !g.leakStep && (p == l.Module || strings.HasSuffix(p, "/"+l.Module)) {
		g.leak(p)
	}
	g.now += 800
	g.path = g.path[:len(g.path)-1]
	g.close(mod)
	g.now += 300
	g.close(call)
}

// leak appends to a cache that nobody trims: aten::cat in the module's own
// frame allocates the grown cache, and the old one stays referenced too.
func (g *gen) leak(path string) {
	var held []alloc
	rows := int(g.o.Leak.BytesPerStep / (hidden * bytesPerElem))
	g.kernelOp("aten::cat", fmt.Sprintf("[[[%d, %d], [%d, %d]], []]", rows, hidden, g.o.Tokens, hidden), g.o.Leak.BytesPerStep,
		"void at::native::(anonymous namespace)::CatArrayBatchedCopy_aligned16_contig<at::native::(anonymous namespace)::OpaqueType<2u>, unsigned int, 2, 128, 1>(at::native::(anonymous namespace)::OpaqueType<2u>*, at::native::(anonymous namespace)::CatArrInputTensorMetadata<at::native::(anonymous namespace)::OpaqueType<2u>, unsigned int, 128, 1>, at::native::(anonymous namespace)::TensorSizeStride<unsigned int, 4u>, int, unsigned int)", 30_000, &held)
	g.leakStep = true
	g.leakPath = path
	for _, a := range held {
		g.leakBytes += a.bytes
	}
}

// pyFrame opens a python_function frame whose parent is the innermost open
// frame.
func (g *gen) pyFrame(name string, extra []arg) int {
	g.pyID++
	parent := int64(0)
	if len(g.pyStack) > 0 {
		parent = g.pyStack[len(g.pyStack)-1]
	}
	g.pyStack = append(g.pyStack, g.pyID)
	args := append([]arg{{"Python parent id", parent}, {"Python id", g.pyID}}, extra...)
	args = append(args, arg{"Python thread", 0})
	return g.open(event{ph: "X", cat: "python_function", name: name, args: args, evIdx: true})
}

// open starts a duration event at the cursor on the main thread; close
// sets its duration. Python frames pop their Python id on close.
func (g *gen) open(e event) int {
	e.pid, e.tid, e.ts, e.hasDur = g.o.Pid, g.o.Tid, g.now, true
	g.cpu = append(g.cpu, e)
	return len(g.cpu) - 1
}

func (g *gen) close(i int) {
	e := &g.cpu[i]
	e.dur = g.now - e.ts
	if e.cat == "python_function" {
		g.pyStack = g.pyStack[:len(g.pyStack)-1]
	}
}

// op records a cpu_op around body.
func (g *gen) op(name, inputDims string, body func()) {
	g.extID++
	args := []arg{{"External id", g.extID}, {"Record function id", 0}}
	if inputDims != "" {
		args = append(args, arg{"Input Dims", json.RawMessage(inputDims)})
	}
	i := g.open(event{ph: "X", cat: "cpu_op", name: name, args: args, evIdx: true})
	g.now += 1_200
	if body != nil {
		body()
	}
	g.now += 900
	g.close(i)
}

// kernelOp is an op that allocates its output (bytes > 0: a [memory] event
// inside the op, the allocation appended to *into) and launches kernel.
func (g *gen) kernelOp(name, inputDims string, bytes int64, kernel string, kernelNs int64, into *[]alloc) {
	g.op(name, inputDims, func() {
		if bytes > 0 {
			*into = append(*into, g.gpuAlloc(bytes))
		}
		g.launch("cudaLaunchKernel", 211, func(start int64, corr int64) event {
			grid := max(int(bytes/(128*1024)), 1)
			return event{ph: "X", cat: "kernel", name: kernel, ts: start, dur: kernelNs, args: []arg{
				{"External id", g.extID}, {"queued", 0}, {"device", g.o.Device}, {"context", 1},
				{"stream", g.o.Stream}, {"correlation", corr}, {"registers per thread", 128},
				{"shared memory", 49152}, {"blocks per SM", 2.5}, {"warps per SM", 10},
				{"grid", json.RawMessage(fmt.Sprintf("[%d, 1, 1]", grid))}, {"block", json.RawMessage("[128, 1, 1]")},
				{"est. achieved occupancy %", 12},
			}}
		})
	})
}

// memcpy copies bytes from the device to the host.
func (g *gen) memcpy(bytes int64) {
	g.launch("cudaMemcpyAsync", 41, func(start int64, corr int64) event {
		return event{ph: "X", cat: "gpu_memcpy", name: "Memcpy DtoH (Device -> Pageable)", ts: start, dur: 2_400, args: []arg{
			{"External id", g.extID}, {"device", g.o.Device}, {"context", 1}, {"stream", g.o.Stream},
			{"correlation", corr}, {"bytes", bytes}, {"memory bandwidth (GB/s)", float64(bytes) / 2_400},
		}}
	})
	// The host waits for the copy.
	g.now = max(g.now, g.gpuNow) + 2_000
}

// launch records the runtime call, the GPU activity it queues (built by
// gpu from its start time and correlation) and the ac2g flow between them.
func (g *gen) launch(name string, cbid int, gpu func(start, corr int64) event) {
	g.corr++
	start := g.now
	g.cpu = append(g.cpu,
		event{ph: "X", cat: "cuda_runtime", name: name, pid: g.o.Pid, tid: g.o.Tid, ts: start, dur: 4_500, hasDur: true, evIdx: true,
			args: []arg{{"External id", g.extID}, {"cbid", cbid}, {"correlation", g.corr}}},
		event{ph: "s", cat: "ac2g", name: "ac2g", pid: g.o.Pid, tid: g.o.Tid, ts: start, id: g.corr})
	g.now += 4_500
	k := gpu(max(start+3_800, g.gpuNow), g.corr)
	k.pid, k.tid, k.hasDur = int64(g.o.Device), int64(g.o.Stream), true
	g.gpuNow = k.ts + k.dur + 1_000
	g.gpu = append(g.gpu, k,
		event{ph: "f", cat: "ac2g", name: "ac2g", pid: int64(g.o.Device), tid: int64(g.o.Stream), ts: k.ts, id: g.corr, bp: "e"})
}

// gpuAlloc records a device allocation by the caching allocator at the
// cursor. Blocks are 512-byte aligned; reserved memory grows in 20 MiB
// segments and is never returned, as with the default allocator settings.
func (g *gen) gpuAlloc(bytes int64) alloc {
	a := alloc{addr: g.nextAddr, bytes: bytes}
	g.nextAddr += roundUp(bytes, 512)
	g.allocated += bytes
	if g.allocated > g.reserved {
		g.reserved = roundUp(g.allocated, 20*mib)
	}
	g.memEvent(a.addr, bytes, 1, int64(g.o.Device))
	return a
}

func (g *gen) free(a alloc) {
	g.allocated -= a.bytes
	g.memEvent(a.addr, -a.bytes, 1, int64(g.o.Device))
}

// hostAlloc is a pinned-less host allocation (Device Type 0), which the
// importer counts but does not attribute.
func (g *gen) hostAlloc(bytes int64) {
	g.cpu = append(g.cpu, event{ph: "i", cat: "cpu_instant_event", name: "[memory]", scope: "t",
		pid: g.o.Pid, tid: g.o.Tid, ts: g.now, evIdx: true, args: []arg{
			{"Total Reserved", 0}, {"Total Allocated", 0}, {"Bytes", bytes},
			{"Addr", g.nextAddr - 0x2000_0000_0000}, {"Device Type", 0}, {"Device Id", -1},
		}})
	g.now += 300
}

func (g *gen) memEvent(addr, bytes int64, devType, dev int64) {
	g.cpu = append(g.cpu, event{ph: "i", cat: "cpu_instant_event", name: "[memory]", scope: "t",
		pid: g.o.Pid, tid: g.o.Tid, ts: g.now, evIdx: true, args: []arg{
			{"Total Reserved", g.reserved}, {"Total Allocated", g.allocated}, {"Bytes", bytes},
			{"Addr", addr}, {"Device Type", devType}, {"Device Id", dev},
		}})
	g.now += 300
}

// dims renders "Input Dims" ([] for a non-tensor argument).
func dims(shapes ...[]int) string {
	var b strings.Builder
	b.WriteByte('[')
	for i, s := range shapes {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteByte('[')
		for j, d := range s {
			if j > 0 {
				b.WriteString(", ")
			}
			b.WriteString(strconv.Itoa(d))
		}
		b.WriteByte(']')
	}
	b.WriteByte(']')
	return b.String()
}

// write renders the document in Kineto's layout: the metadata, then
// CPU-side events, GPU activity, and the process/thread metadata events.
func (g *gen) write(w *bufio.Writer, base, first, last int64) (int, error) {
	o := g.o
	// The header's error, as every buffered write's, comes back from the
	// last write and from the caller's Flush.
	_, _ = fmt.Fprintf(w, `{
  "schemaVersion": 1,
  "deviceProperties": [
    {
      "id": %d, "name": %q, "totalGlobalMem": 85097971712,
      "computeMajor": 8, "computeMinor": 0,
      "maxThreadsPerBlock": 1024, "maxThreadsPerMultiprocessor": 2048,
      "regsPerBlock": 65536, "regsPerMultiprocessor": 65536, "warpSize": 32,
      "sharedMemPerBlock": 49152, "sharedMemPerMultiprocessor": 167936,
      "numSms": 108, "sharedMemPerBlockOptin": 166912
    }
  ],
  "cupti_version": 24,
  "cuda_runtime_version": 12040,
  "cuda_driver_version": 12040,
  "distributedInfo": {"backend": "nccl", "rank": 0, "world_size": 1, "pg_count": 1, "pg_config": [{"pg_name": "0", "pg_desc": "default_pg", "backend_config": "cuda:nccl", "pg_size": 1, "ranks": [0]}], "nccl_version": "2.21.5"},
  "record_shapes": 1,
  "profile_memory": 1,
  "with_stack": 1,
  "with_modules": 1,
  "trace_id": %q,
  "displayTimeUnit": "ms",
  "baseTimeNanoseconds": %d,
  "traceEvents": [
`, o.Device, o.GPUName, o.TraceID, base)

	var events []event
	events = append(events, g.cpu...)
	events = append(events, g.gpu...)
	meta := func(name string, pid, tid any, k string, v any) event {
		return event{ph: "M", name: name, pid: pid, tid: tid, ts: first, args: []arg{{k, v}}}
	}
	dev := int64(o.Device)
	events = append(events,
		meta("process_name", o.Pid, int64(0), "name", o.ProcessName),
		meta("process_labels", o.Pid, int64(0), "labels", "CPU"),
		meta("process_sort_index", o.Pid, int64(0), "sort_index", o.Pid),
		meta("process_name", dev, int64(0), "name", o.ProcessName),
		meta("process_labels", dev, int64(0), "labels", "GPU "+strconv.Itoa(o.Device)),
		meta("process_sort_index", dev, int64(0), "sort_index", 5000000+dev),
		meta("thread_name", dev, int64(o.Stream), "name", fmt.Sprintf("stream %d ", o.Stream)),
		meta("thread_sort_index", dev, int64(o.Stream), "sort_index", o.Stream),
		meta("thread_name", o.Pid, o.Tid, "name", fmt.Sprintf("thread %d (%s)", o.Tid, o.ProcessName)),
		meta("thread_sort_index", o.Pid, o.Tid, "sort_index", o.Tid),
		event{ph: "X", cat: "Trace", name: "PyTorch Profiler (0)", pid: "Spans", tid: "PyTorch Profiler",
			ts: first, dur: last - first, hasDur: true, args: []arg{{"Op count", 0}}},
		event{ph: "i", name: "Iteration Start: PyTorch Profiler", pid: "Traces", tid: "Trace PyTorch Profiler", ts: first, scope: "g"},
		event{ph: "i", name: "Record Window End", pid: "", tid: "", ts: last + 1_000, scope: "g"},
	)
	idx := 0
	for i := range events {
		if i > 0 {
			w.WriteString(",\n")
		}
		if err := writeEvent(w, &events[i], &idx); err != nil {
			return 0, err
		}
	}
	if _, err := fmt.Fprintf(w, "\n  ],\n  \"traceName\": %q\n}\n", fmt.Sprintf("/tmp/libkineto_activities_%d.json", o.Pid)); err != nil {
		return 0, err
	}
	return len(events), nil
}

func writeEvent(w *bufio.Writer, e *event, idx *int) error {
	w.WriteString("  {\n    \"ph\": ")
	w.WriteString(strconv.Quote(e.ph))
	if e.cat != "" {
		w.WriteString(", \"cat\": ")
		w.WriteString(jsonString(e.cat))
	}
	w.WriteString(", \"name\": ")
	w.WriteString(jsonString(e.name))
	w.WriteString(", \"pid\": ")
	writeValue(w, e.pid)
	w.WriteString(", \"tid\": ")
	writeValue(w, e.tid)
	w.WriteString(",\n    \"ts\": ")
	w.WriteString(micros(e.ts))
	if e.hasDur {
		w.WriteString(", \"dur\": ")
		w.WriteString(micros(e.dur))
	}
	if e.ph == "s" || e.ph == "f" {
		w.WriteString(", \"id\": ")
		w.WriteString(strconv.FormatInt(e.id, 10))
	}
	if e.bp != "" {
		w.WriteString(", \"bp\": ")
		w.WriteString(strconv.Quote(e.bp))
	}
	if e.scope != "" {
		w.WriteString(", \"s\": ")
		w.WriteString(strconv.Quote(e.scope))
	}
	args := e.args
	if e.evIdx {
		args = append(args[:len(args):len(args)], arg{"Ev Idx", *idx})
		*idx++
	}
	if len(args) > 0 {
		w.WriteString(",\n    \"args\": {\n      ")
		for i, a := range args {
			if i > 0 {
				w.WriteString(", ")
			}
			w.WriteString(jsonString(a.k))
			w.WriteString(": ")
			writeValue(w, a.v)
		}
		w.WriteString("\n    }")
	}
	_, err := w.WriteString("\n  }")
	return err
}

func writeValue(w *bufio.Writer, v any) {
	switch x := v.(type) {
	case int:
		w.WriteString(strconv.Itoa(x))
	case int64:
		w.WriteString(strconv.FormatInt(x, 10))
	case float64:
		w.WriteString(strconv.FormatFloat(x, 'g', -1, 64))
	case string:
		w.WriteString(jsonString(x))
	case json.RawMessage:
		w.Write(x)
	default:
		panic(fmt.Sprintf("tracegen: unsupported arg type %T", v))
	}
}

// jsonString quotes s as JSON. Kernel names are full of '<' and '>',
// which Kineto writes as they are, not as json.Marshal's \u003c escapes.
func jsonString(s string) string {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s) // a string always encodes
	return strings.TrimSuffix(b.String(), "\n")
}

// micros renders ns as Kineto's microseconds with three decimals.
func micros(ns int64) string {
	sign := ""
	if ns < 0 {
		sign, ns = "-", -ns
	}
	return fmt.Sprintf("%s%d.%03d", sign, ns/1000, ns%1000)
}
