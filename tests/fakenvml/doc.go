// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

// Package fakenvml holds a fake NVML shared library, written in C, that the
// end-to-end tests and the demo load through go-nvml's real cgo path in place
// of NVIDIA's libnvidia-ml.so.1. What it reports is scripted by a scenario
// file; see README.md in this directory. The Go code here is only its test.
package fakenvml
