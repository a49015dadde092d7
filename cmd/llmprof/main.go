// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package main

import "os"

func main() {
	os.Exit(Main(os.Args[1:], os.Stdout, os.Stderr))
}
