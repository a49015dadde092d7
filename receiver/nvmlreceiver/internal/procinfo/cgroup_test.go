// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package procinfo

import (
	"strconv"
	"strings"
	"testing"
)

// IDs used throughout the tests. They are arbitrary but well-formed.
const (
	ctrA = "3e1f0c5a9b7d4e2f8a6c0b1d3e5f7a9b2c4d6e8f0a1b3c5d7e9f1a2b4c6d8e0f"
	ctrB = "9d8c7b6a5f4e3d2c1b0a99887766554433221100ffeeddccbbaa998877665544"
	// podA in dashed form and as systemd writes it into a slice name.
	podA       = "0f1d2c3b-4a5e-6f70-8192-a3b4c5d6e7f8"
	podASystem = "0f1d2c3b_4a5e_6f70_8192_a3b4c5d6e7f8"
	podB       = "7c2e9a41-5d3b-4f60-9e8d-1a2b3c4d5e6f"
	podBSystem = "7c2e9a41_5d3b_4f60_9e8d_1a2b3c4d5e6f"
	// staticPod is the form kubelet gives static pods: a 32-hex-digit hash.
	staticPod = "6c5bf3a0e2d94f1b8a7e6d5c4b3a2f10"
)

// v1File builds a cgroup v1 file the way a node running containers in a
// hybrid (v1 + empty unified) setup shows it: every controller in the
// container's cgroup except rdma, which runtimes leave at the root, and an
// empty unified hierarchy.
func v1File(path string) string {
	controllers := []string{
		"hugetlb", "cpuset", "memory", "devices", "freezer", "net_cls,net_prio",
		"blkio", "perf_event", "cpu,cpuacct", "pids", "misc",
	}
	var b strings.Builder
	n := len(controllers) + 2
	for _, c := range controllers {
		b.WriteString(strconv.Itoa(n) + ":" + c + ":" + path + "\n")
		n--
	}
	b.WriteString(strconv.Itoa(n) + ":rdma:/\n")
	n--
	b.WriteString(strconv.Itoa(n) + ":name=systemd:" + path + "\n")
	b.WriteString("0::/\n")
	return b.String()
}

var cgroupCases = []struct {
	name             string
	data             string
	wantCtr, wantPod string
}{
	// Kubernetes, systemd cgroup driver.
	{
		name:    "v2 systemd containerd burstable",
		data:    "0::/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" + podASystem + ".slice/cri-containerd-" + ctrA + ".scope\n",
		wantCtr: ctrA, wantPod: podA,
	},
	{
		name:    "v1 systemd containerd burstable",
		data:    v1File("/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" + podASystem + ".slice/cri-containerd-" + ctrA + ".scope"),
		wantCtr: ctrA, wantPod: podA,
	},
	{
		name:    "v2 systemd containerd guaranteed",
		data:    "0::/kubepods.slice/kubepods-pod" + podBSystem + ".slice/cri-containerd-" + ctrB + ".scope\n",
		wantCtr: ctrB, wantPod: podB,
	},
	{
		name:    "v2 systemd cri-o besteffort",
		data:    "0::/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod" + podBSystem + ".slice/crio-" + ctrB + ".scope\n",
		wantCtr: ctrB, wantPod: podB,
	},
	{
		name:    "v1 systemd cri-o besteffort",
		data:    v1File("/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod" + podBSystem + ".slice/crio-" + ctrB + ".scope"),
		wantCtr: ctrB, wantPod: podB,
	},
	{
		// conmon, CRI-O's per-container monitor, lives in the pod's slice but
		// is not the container.
		name:    "v2 systemd cri-o conmon",
		data:    "0::/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod" + podBSystem + ".slice/crio-conmon-" + ctrB + ".scope\n",
		wantCtr: "", wantPod: podB,
	},
	{
		name:    "v2 systemd docker via cri-dockerd",
		data:    "0::/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" + podASystem + ".slice/docker-" + ctrA + ".scope\n",
		wantCtr: ctrA, wantPod: podA,
	},
	{
		name:    "v2 pod slice only",
		data:    "0::/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" + podASystem + ".slice\n",
		wantCtr: "", wantPod: podA,
	},
	// Kubernetes, cgroupfs driver.
	{
		name:    "v1 cgroupfs burstable",
		data:    v1File("/kubepods/burstable/pod" + podA + "/" + ctrA),
		wantCtr: ctrA, wantPod: podA,
	},
	{
		name:    "v2 cgroupfs burstable",
		data:    "0::/kubepods/burstable/pod" + podA + "/" + ctrA + "\n",
		wantCtr: ctrA, wantPod: podA,
	},
	{
		name:    "v1 cgroupfs guaranteed",
		data:    v1File("/kubepods/pod" + podB + "/" + ctrB),
		wantCtr: ctrB, wantPod: podB,
	},
	{
		name:    "v2 cgroupfs guaranteed",
		data:    "0::/kubepods/pod" + podB + "/" + ctrB + "\n",
		wantCtr: ctrB, wantPod: podB,
	},
	{
		name:    "v1 cgroupfs cri-o",
		data:    v1File("/kubepods/besteffort/pod" + podA + "/crio-" + ctrA),
		wantCtr: ctrA, wantPod: podA,
	},
	{
		name:    "v1 cgroupfs static pod",
		data:    v1File("/kubepods/burstable/pod" + staticPod + "/" + ctrA),
		wantCtr: ctrA, wantPod: staticPod,
	},
	{
		name:    "v2 systemd static pod",
		data:    "0::/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" + staticPod + ".slice/cri-containerd-" + ctrA + ".scope\n",
		wantCtr: ctrA, wantPod: staticPod,
	},
	// Containers outside Kubernetes.
	{
		name:    "v1 plain docker",
		data:    v1File("/docker/" + ctrA),
		wantCtr: ctrA,
	},
	{
		name:    "v2 plain docker cgroupfs",
		data:    "0::/docker/" + ctrA + "\n",
		wantCtr: ctrA,
	},
	{
		name:    "v2 plain docker systemd",
		data:    "0::/system.slice/docker-" + ctrA + ".scope\n",
		wantCtr: ctrA,
	},
	{
		name:    "v2 rootless podman",
		data:    "0::/user.slice/user-1000.slice/user@1000.service/user.slice/libpod-" + ctrB + ".scope/container\n",
		wantCtr: ctrB,
	},
	{
		name: "v2 podman conmon",
		data: "0::/user.slice/user-1000.slice/user@1000.service/user.slice/libpod-conmon-" + ctrB + ".scope\n",
	},
	// Host processes and namespaced views.
	{
		name: "v2 host session",
		data: "0::/user.slice/user-1000.slice/session-2.scope\n",
	},
	{
		name: "v1 host session",
		data: v1File("/user.slice/user-1000.slice/session-2.scope"),
	},
	{
		name: "v2 host system service",
		data: "0::/system.slice/nvidia-persistenced.service\n",
	},
	{
		name: "v1 root",
		data: v1File("/"),
	},
	{
		name: "v2 root",
		data: "0::/\n",
	},
	{
		name: "v1 namespaced view from inside a container",
		data: "12:memory:/\n11:cpu,cpuacct:/\n10:pids:/\n1:name=systemd:/\n0::/\n",
	},
	{
		// An agent in its own cgroup namespace (the default for containers
		// on cgroup v2) sees other pods' cgroups relative to its own.
		name:    "v2 other pod seen from a private cgroup namespace",
		data:    "0::/../../../kubepods-besteffort.slice/kubepods-besteffort-pod" + podBSystem + ".slice/cri-containerd-" + ctrB + ".scope\n",
		wantCtr: ctrB, wantPod: podB,
	},
	{
		// kind: the node is a Docker container and the pod's cgroup sits
		// inside it; the innermost container is the pod's.
		name:    "v2 kind node in docker",
		data:    "0::/system.slice/docker-" + ctrA + ".scope/kubelet.slice/kubelet-kubepods.slice/kubelet-kubepods-besteffort.slice/kubelet-kubepods-besteffort-pod" + podBSystem + ".slice/cri-containerd-" + ctrB + ".scope\n",
		wantCtr: ctrB, wantPod: podB,
	},
	{
		name:    "v2 process in a sub-cgroup of its container",
		data:    "0::/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" + podASystem + ".slice/cri-containerd-" + ctrA + ".scope/init.scope\n",
		wantCtr: ctrA, wantPod: podA,
	},
	{
		name:    "v2 deleted cgroup",
		data:    "0::/kubepods/burstable/pod" + podA + "/" + ctrA + " (deleted)\n",
		wantCtr: ctrA, wantPod: podA,
	},
	{
		name:    "no trailing newline",
		data:    "0::/kubepods/burstable/pod" + podA + "/" + ctrA,
		wantCtr: ctrA, wantPod: podA,
	},
	// Choosing between lines.
	{
		// Only some hierarchies put the process in the container's cgroup;
		// any of them will do.
		name:    "v1 container only in the memory hierarchy",
		data:    "9:name=systemd:/\n4:memory:/docker/" + ctrA + "\n3:cpuset:/\n0::/\n",
		wantCtr: ctrA,
	},
	{
		name:    "v1 preferred controller wins over an unpreferred one",
		data:    "7:devices:/docker/" + ctrB + "\n4:cpu,cpuacct:/docker/" + ctrA + "\n",
		wantCtr: ctrA,
	},
	{
		name:    "v1 line with pod wins over line without",
		data:    "7:memory:/docker/" + ctrB + "\n4:freezer:/kubepods/pod" + podA + "/" + ctrA + "\n",
		wantCtr: ctrA, wantPod: podA,
	},
	// Lookalikes and garbage.
	{
		name: "short hex is not a container",
		data: "4:memory:/process_api/96d211ee3ee85e62ad2ed8082b5ec745\n",
	},
	{
		name: "uppercase hex is not a container",
		data: "0::/docker/" + strings.ToUpper(ctrA) + "\n",
	},
	{
		name: "pod segment outside kubepods slice",
		data: "0::/system.slice/foo-pod" + podASystem + ".slice\n",
	},
	{
		name:    "malformed pod uid",
		data:    "0::/kubepods/burstable/pod0f1d2c3b-4a5e-6f70-8192/" + ctrA + "\n",
		wantCtr: ctrA,
	},
	{name: "empty", data: ""},
	{name: "garbage", data: "not a cgroup file\n::\n:\n\n"},
}

func TestParseCgroup(t *testing.T) {
	for _, tc := range cgroupCases {
		t.Run(tc.name, func(t *testing.T) {
			ctr, pod := parseCgroup(tc.data)
			if ctr != tc.wantCtr || pod != tc.wantPod {
				t.Errorf("parseCgroup(%q)\n got container %q pod %q\nwant container %q pod %q",
					tc.data, ctr, pod, tc.wantCtr, tc.wantPod)
			}
		})
	}
}

func FuzzParseCgroup(f *testing.F) {
	for _, tc := range cgroupCases {
		f.Add(tc.data)
	}
	f.Add("0::/kubepods.slice/kubepods-pod.slice/cri-containerd-.scope")
	f.Add("1:a:b:c:/kubepods/pod/\n2::/docker//")
	f.Fuzz(func(t *testing.T, data string) {
		ctr, pod := parseCgroup(data)
		if ctr != "" && (len(ctr) != containerIDLen || !isLowerHex(ctr)) {
			t.Errorf("parseCgroup(%q): malformed container ID %q", data, ctr)
		}
		if pod != "" && !isPodUID(pod) {
			t.Errorf("parseCgroup(%q): malformed pod UID %q", data, pod)
		}
		if ctr != "" && !strings.Contains(data, ctr) {
			t.Errorf("parseCgroup(%q): container ID %q is not in the input", data, ctr)
		}
	})
}
