// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

// Package nvmlreceiver reads every GPU and every GPU process on a node from
// NVIDIA's NVML library (through github.com/NVIDIA/go-nvml) and emits the GPU
// part of the unified spec (docs/metric-spec.md): device memory, utilization,
// temperature, power and energy, clocks, PCIe traffic, throttle reasons, ECC
// and XID errors, and per-process memory and utilization attributed to
// containers and Kubernetes pods.
//
// It replaces dcgm-exporter for the common metrics without a DCGM host
// engine: NVML ships with the driver, and GPM samples (Hopper and newer) give
// SM and tensor activity without taking the profiling lock.
//
//go:generate ../../.tools/mdatagen metadata.yaml
package nvmlreceiver // import "github.com/llmops-otel/otelcol-llmops/receiver/nvmlreceiver"
