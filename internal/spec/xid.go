// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package spec

import "sort"

// XIDRecovery is what an XID needs before the GPU (or the work on it) is
// trusted again. The classes follow the immediate-action column of NVIDIA's
// Xid catalogue, folded into the four steps an operator can take.
type XIDRecovery uint8

const (
	// XIDRecoveryNone: informational or a consequence of an earlier error:
	// nothing to do for it alone.
	XIDRecoveryNone XIDRecovery = iota
	// XIDRecoveryRestartApp: the application that hit it failed; the GPU
	// itself is fine.
	XIDRecoveryRestartApp
	// XIDRecoveryResetGPU: the GPU must be reset (nvidia-smi -r, or a driver
	// reload) before it is trusted.
	XIDRecoveryResetGPU
	// XIDRecoveryRebootNode: the GPU is gone or wedged: a node reboot (or
	// more) is needed.
	XIDRecoveryRebootNode
)

// String returns the form written in hw.gpu.xid.recovery: "none",
// "restart_app", "reset_gpu" or "reboot_node".
func (r XIDRecovery) String() string {
	switch r {
	case XIDRecoveryRestartApp:
		return "restart_app"
	case XIDRecoveryResetGPU:
		return "reset_gpu"
	case XIDRecoveryRebootNode:
		return "reboot_node"
	default:
		return "none"
	}
}

// NeedsReset reports whether the XID leaves the GPU in a state only a reset
// or reboot clears (ResetGPU, RebootNode).
func (r XIDRecovery) NeedsReset() bool {
	return r == XIDRecoveryResetGPU || r == XIDRecoveryRebootNode
}

// xidRecoveries lists the String forms in order, as hw.gpu.xid.recovery's
// Values.
var xidRecoveries = []string{
	XIDRecoveryNone.String(), XIDRecoveryRestartApp.String(),
	XIDRecoveryResetGPU.String(), XIDRecoveryRebootNode.String(),
}

// XID is one entry of the XID catalogue.
type XID struct {
	Code int64
	// Name is a short name, e.g. "GPU has fallen off the bus".
	Name     string
	Recovery XIDRecovery
	// Action is one imperative sentence for an operator.
	Action string
}

// xids is the catalogue, sorted by code.
//
// Source: NVIDIA, "Analyzing Xid Errors with the Xid Catalog", GPU Deployment
// and Management Documentation,
// https://docs.nvidia.com/deploy/xid-errors/analyzing-xid-catalog.html
// (the Ampere-and-newer catalogue; its "Resolution Bucket (Immediate Action)"
// column), checked 2026-12-02. Names and actions are written here, not
// NVIDIA's text. Mapping of the catalogue's buckets: IGNORE → none,
// RESTART_APP → restart_app, RESET_GPU → reset_gpu, RESTART_BM → reboot_node;
// the workflow buckets are resolved per entry below. Codes the catalogue marks
// Unused on current GPUs (61, 123 among them) are left out.
var xids = []XID{
	{8, "GPU stopped processing (idle timeout)", XIDRecoveryRestartApp,
		"Restart the application; if it recurs on one GPU, collect a bug report for NVIDIA."},
	{13, "Graphics engine exception", XIDRecoveryRestartApp,
		"Restart the application and debug it (for example with compute-sanitizer): this is usually a kernel bug such as an out-of-range access."},
	{31, "GPU memory page fault", XIDRecoveryRestartApp,
		"Restart the application and look for an illegal memory access in it or in the library it uses."},
	{32, "Corrupted push buffer stream (PBDMA)", XIDRecoveryRestartApp,
		"Restart the application; if it recurs, check the CUDA and driver versions it runs with."},
	{38, "Firmware watchdog timeout", XIDRecoveryNone,
		"Nothing to do for it alone; contact NVIDIA support if it keeps appearing."},
	// The catalogue buckets 43 as IGNORE: the GPU needs nothing. The
	// application whose channel was stopped has failed, which is what
	// restart_app says.
	{43, "GPU stopped processing (channel reset)", XIDRecoveryRestartApp,
		"Restart the application that was stopped; the GPU keeps serving other work."},
	{45, "Preemptive cleanup after an earlier error", XIDRecoveryNone,
		"Act on the XID logged just before it; this one only records that the driver stopped the affected work."},
	{46, "GPU stopped processing (GPU timeout)", XIDRecoveryResetGPU,
		"Drain the GPU and reset it before scheduling work on it again."},
	{48, "Double-bit ECC error", XIDRecoveryResetGPU,
		"Drain the GPU and reset it so the failed memory is retired or remapped; replace it if the errors come back."},
	{62, "Internal micro-controller halt", XIDRecoveryResetGPU,
		"Drain the GPU and reset it; contact NVIDIA support if it happens again."},
	{63, "Row remap or page retirement recorded", XIDRecoveryNone,
		"Reset the GPU at the next convenient moment so the remap takes effect, and watch how often it occurs."},
	{64, "Row remap or page retirement failed", XIDRecoveryResetGPU,
		"Drain the GPU and reset it; plan a replacement, as its memory can no longer protect itself."},
	{68, "Video decoder (NVDEC) error", XIDRecoveryRestartApp,
		"Restart the application using the decoder; contact NVIDIA support if it recurs."},
	{69, "Graphics engine class error", XIDRecoveryRestartApp,
		"Restart the application and check it against the CUDA and driver versions installed."},
	{74, "NVLink error", XIDRecoveryResetGPU,
		"Check the NVLink error counters, then drain the GPU and reset it (or reboot the node) to clear the link error."},
	{79, "GPU has fallen off the bus", XIDRecoveryRebootNode,
		"Drain the node and reboot it; if the GPU is still missing afterwards, check power, cabling and the PCIe slot."},
	{92, "High single-bit ECC error rate", XIDRecoveryNone,
		"Nothing to do now; watch the ECC counters and contact NVIDIA support if the rate keeps rising."},
	// The catalogue's RESTART_APP: only the application that touched the
	// bad memory is affected; the reset that remaps the row can wait.
	{94, "Contained ECC error", XIDRecoveryRestartApp,
		"Restart the affected application, and reset the GPU when convenient so the faulty row is remapped."},
	{95, "Uncontained ECC error", XIDRecoveryResetGPU,
		"Drain the GPU and reset it before restarting any application on it."},
	{109, "Context switch timeout", XIDRecoveryResetGPU,
		"Drain the GPU and reset it; contact NVIDIA support if it recurs."},
	{119, "GSP RPC timeout", XIDRecoveryResetGPU,
		"Drain the GPU and reset it; if it recurs, check the driver and GSP firmware versions."},
	{120, "GSP error", XIDRecoveryResetGPU,
		"Drain the GPU and reset it; if it recurs, check the driver and GSP firmware versions."},
	{121, "C2C link error", XIDRecoveryNone,
		"Nothing to do for it alone; contact NVIDIA support if it keeps appearing (Grace systems only)."},
	{140, "Unrecovered ECC error", XIDRecoveryResetGPU,
		"Drain the GPU and reset it; contact NVIDIA support if it happens again."},
	{143, "GPU initialization error", XIDRecoveryResetGPU,
		"Reset the GPU and check that it initializes; contact NVIDIA support if it fails again."},
	// 154 carries the recovery the driver decided for the XIDs around it
	// (none, drain P2P, drain and reset, GPU reset, node reboot).
	{154, "GPU recovery action changed", XIDRecoveryNone,
		"Carry out the recovery action the message names for the XIDs logged with it."},
	{155, "NVLink software-defined error", XIDRecoveryResetGPU,
		"Check whether the link was taken down on purpose (a sleep transition); if not, drain the GPU and reset it."},
	{156, "Resource retirement event", XIDRecoveryResetGPU,
		"Drain the GPU and reset it so the retirement takes effect."},
}

var xidIndex = func() map[int64]int {
	m := make(map[int64]int, len(xids))
	for i, x := range xids {
		m[x.Code] = i
	}
	return m
}()

// LookupXID returns the catalogue entry of code; false for a code not in it.
func LookupXID(code int64) (XID, bool) {
	i, ok := xidIndex[code]
	if !ok {
		return XID{}, false
	}
	return xids[i], true
}

// XIDs returns the catalogue sorted by code (a copy).
func XIDs() []XID {
	out := make([]XID, len(xids))
	copy(out, xids)
	sort.Slice(out, func(i, j int) bool { return out[i].Code < out[j].Code })
	return out
}
