// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package harness

import (
	"context"
	"net/http"
)

// httpGet is client.Get with its context said: the harness's requests are
// bounded by the client's Timeout and their callers' deadlines, and some
// run from a test's cleanup, after the test's own context is done.
func httpGet(client *http.Client, url string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(context.Background(), http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	return client.Do(req)
}
