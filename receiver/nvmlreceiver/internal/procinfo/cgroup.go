// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package procinfo

import "strings"

// containerIDLen is the length of the IDs that Docker, containerd, CRI-O and
// Podman give containers: 32 random bytes written as lowercase hex.
const containerIDLen = 64

// containerPrefixes are the runtime-specific prefixes of a container's leaf
// cgroup when the runtime is driven by systemd ("<prefix><id>.scope"); with
// the cgroupfs driver the leaf is the bare ID, sometimes with the same prefix.
// Monitor processes (crio-conmon-<id>, libpod-conmon-<id>) share the prefix
// but are followed by "conmon-", which fails the ID check below, so they are
// never taken for the container.
var containerPrefixes = []string{
	"cri-containerd-",
	"crio-",
	"docker-",
	"libpod-",
	"containerd-",
}

// cgroupLine is one candidate attribution, from one line of a cgroup file.
type cgroupLine struct {
	containerID, podUID string
	preferred           bool
}

// better reports whether l is a better attribution than o: a container beats
// no container, a pod beats no pod, and the controllers every runtime sets up
// for its containers beat the rest.
func (l cgroupLine) better(o cgroupLine) bool {
	if (l.containerID != "") != (o.containerID != "") {
		return l.containerID != ""
	}
	if (l.podUID != "") != (o.podUID != "") {
		return l.podUID != ""
	}
	return l.preferred && !o.preferred
}

// parseCgroup extracts the container ID and the Kubernetes pod UID from the
// contents of /proc/<pid>/cgroup. It understands cgroup v1 (one
// "hierarchy:controllers:path" line per hierarchy), cgroup v2 (a single
// "0::path" line) and the hybrid of both. Both values come from the same line,
// so they never describe two different cgroups. Either is empty when the path
// does not identify one, as for host processes or for a process that sees
// only its own cgroup namespace ("0::/").
func parseCgroup(data string) (containerID, podUID string) {
	var best cgroupLine
	for len(data) > 0 {
		line := data
		if i := strings.IndexByte(data, '\n'); i >= 0 {
			line, data = data[:i], data[i+1:]
		} else {
			data = ""
		}
		// The path is everything after the second colon; it may itself
		// contain colons.
		i := strings.IndexByte(line, ':')
		if i < 0 {
			continue
		}
		j := strings.IndexByte(line[i+1:], ':')
		if j < 0 {
			continue
		}
		controllers, path := line[i+1:i+1+j], line[i+2+j:]
		c := parseCgroupPath(path)
		if c.containerID == "" && c.podUID == "" {
			continue
		}
		c.preferred = preferredControllers(controllers)
		if best.containerID == "" && best.podUID == "" || c.better(best) {
			best = c
		}
	}
	return best.containerID, best.podUID
}

// preferredControllers reports whether a cgroup v1 controller list (such as
// "cpu,cpuacct") names a hierarchy in which runtimes always place containers
// under their own cgroup. The cgroup v2 line has an empty list and is the only
// line there is, or in hybrid mode mirrors name=systemd.
func preferredControllers(list string) bool {
	if list == "" {
		return true
	}
	for list != "" {
		c := list
		if i := strings.IndexByte(list, ','); i >= 0 {
			c, list = list[:i], list[i+1:]
		} else {
			list = ""
		}
		switch c {
		case "memory", "cpu", "pids", "name=systemd":
			return true
		}
	}
	return false
}

// parseCgroupPath finds the innermost container and pod in a cgroup path.
// Innermost matters when containers nest, as with kind, where a pod's cgroup
// sits inside the Docker container that plays the node.
func parseCgroupPath(path string) cgroupLine {
	// cgroup v2 marks a removed cgroup that a zombie still references.
	path = strings.TrimSuffix(path, " (deleted)")
	var c cgroupLine
	for path != "" {
		seg := path
		if i := strings.LastIndexByte(path, '/'); i >= 0 {
			seg, path = path[i+1:], path[:i]
		} else {
			path = ""
		}
		if c.containerID == "" {
			if id, ok := containerSegment(seg); ok {
				c.containerID = id
				continue
			}
		}
		if uid, ok := podSegment(seg); ok {
			c.podUID = uid
			// Anything further up is the pod's parents (QoS class,
			// kubepods) or the node's own container.
			return c
		}
	}
	return c
}

// containerSegment recognises a container's leaf cgroup:
// "cri-containerd-<id>.scope", "crio-<id>.scope", "docker-<id>.scope",
// "libpod-<id>.scope" with the systemd driver, the bare "<id>" with cgroupfs.
func containerSegment(seg string) (string, bool) {
	seg = strings.TrimSuffix(seg, ".scope")
	if len(seg) > containerIDLen {
		for _, p := range containerPrefixes {
			if strings.HasPrefix(seg, p) {
				seg = seg[len(p):]
				break
			}
		}
	}
	if len(seg) != containerIDLen || !isLowerHex(seg) {
		return "", false
	}
	return seg, true
}

// podSegment recognises the cgroup kubelet creates for a pod and returns the
// pod's UID in its usual dashed form. The systemd driver writes
// "kubepods-<qos>-pod<uid>.slice" (or "kubepods-pod<uid>.slice" for
// Guaranteed pods), with the UID's dashes turned into underscores because
// systemd gives dashes a meaning in unit names; cgroupfs writes "pod<uid>".
func podSegment(seg string) (string, bool) {
	var uid string
	if s, ok := strings.CutSuffix(seg, ".slice"); ok {
		i := strings.LastIndex(s, "-pod")
		if i < 0 || !strings.Contains(s[:i], "kubepods") {
			return "", false
		}
		uid = strings.ReplaceAll(s[i+len("-pod"):], "_", "-")
	} else if s, ok := strings.CutPrefix(seg, "pod"); ok {
		uid = s
	} else {
		return "", false
	}
	if !isPodUID(uid) {
		return "", false
	}
	return uid, true
}

// isPodUID accepts the two forms pod UIDs take, both in lowercase: an RFC 4122
// UUID (pods created through the API server) and 32 hex digits (static pods,
// whose UID kubelet derives from a hash of the manifest).
func isPodUID(s string) bool {
	switch len(s) {
	case 32:
		return isLowerHex(s)
	case 36:
		for i := 0; i < len(s); i++ {
			switch i {
			case 8, 13, 18, 23:
				if s[i] != '-' {
					return false
				}
			default:
				if !isLowerHex(s[i : i+1]) {
					return false
				}
			}
		}
		return true
	}
	return false
}

func isLowerHex(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}
