// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

// Package benchutil holds what the side-by-side benchmark programs share.
package benchutil

import (
	"errors"
	"os"
	"path/filepath"
)

// RepoRoot finds the repository root (the directory holding
// builder-config.yaml) from the working directory upwards.
func RepoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "builder-config.yaml")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("run from inside the repository")
		}
		dir = parent
	}
}
