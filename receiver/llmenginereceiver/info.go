// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package llmenginereceiver // import "github.com/llmops-otel/otelcol-llmops/receiver/llmenginereceiver"

import (
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"strings"
	"unicode"
	"unicode/utf8"
)

// maxInfoBody bounds what is read of an info endpoint (TGI /info, llama.cpp
// /props and /v1/models). The real answers are a few KiB — /props carries
// the chat template, the largest part — so 1 MiB leaves room for any
// template while keeping an endless or hostile answer from costing more
// memory than that on every refresh.
const maxInfoBody = 1 << 20

// maxModelName bounds a model name taken from an engine's answer: it
// becomes the gen_ai.request.model resource attribute of every point of the
// target, so a runaway value would be copied into every export. Hugging
// Face ids (org/name) and GGUF file names are far below it.
const maxModelName = 256

// errNoModel says an info answer parsed but named no model.
var errNoModel = errors.New("names no model")

// modelFromTGIInfo reads the model from TGI's GET /info answer
// ({"model_id": "org/name", ...}).
func modelFromTGIInfo(raw []byte) (string, error) {
	var v struct {
		ModelID string `json:"model_id"`
	}
	if err := json.Unmarshal(raw, &v); err != nil {
		return "", fmt.Errorf("TGI /info: %w", err)
	}
	if v.ModelID == "" {
		return "", fmt.Errorf("TGI /info %w (no model_id)", errNoModel)
	}
	return checkModelName(v.ModelID)
}

// modelFromLlamaCppProps reads the model from llama.cpp's GET /props: the
// --alias when one was given, else the base name of the GGUF file.
func modelFromLlamaCppProps(raw []byte) (string, error) {
	var v struct {
		ModelPath string `json:"model_path"`
		Alias     string `json:"model_alias"`
	}
	if err := json.Unmarshal(raw, &v); err != nil {
		return "", fmt.Errorf("llama.cpp /props: %w", err)
	}
	if v.Alias != "" {
		return checkModelName(v.Alias)
	}
	// path.Base of "" is "." and of "/" is "/": neither names a model.
	if base := path.Base(v.ModelPath); v.ModelPath != "" && base != "." && base != "/" {
		return checkModelName(base)
	}
	return "", fmt.Errorf("llama.cpp /props %w (no model_alias or model_path)", errNoModel)
}

// modelFromModelList reads the first model of an OpenAI-style GET
// /v1/models answer ({"data": [{"id": ...}]}).
func modelFromModelList(raw []byte) (string, error) {
	var v struct {
		Data []struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	if err := json.Unmarshal(raw, &v); err != nil {
		return "", fmt.Errorf("/v1/models: %w", err)
	}
	if len(v.Data) == 0 || v.Data[0].ID == "" {
		return "", fmt.Errorf("/v1/models %w (no models listed)", errNoModel)
	}
	return checkModelName(v.Data[0].ID)
}

// checkModelName accepts a model name of at most maxModelName bytes of
// printable UTF-8 (surrounding spaces trimmed) and refuses anything else:
// an engine that answers with a control character, invalid UTF-8 or a
// megabyte of text is broken or hostile, and its answer is not worth an
// attribute. The error quotes at most the first 32 bytes of the name.
func checkModelName(s string) (string, error) {
	s = strings.TrimSpace(s)
	switch {
	case s == "":
		return "", errors.New("the model name is blank")
	case len(s) > maxModelName:
		return "", fmt.Errorf("the model name is %d bytes long, more than %d (starts %q); set `model` on the target", len(s), maxModelName, prefix(s, 32))
	case !utf8.ValidString(s):
		return "", fmt.Errorf("the model name is not valid UTF-8 (starts %q); set `model` on the target", prefix(s, 32))
	}
	for _, r := range s {
		if !unicode.IsPrint(r) {
			return "", fmt.Errorf("the model name holds the unprintable character %U (starts %q); set `model` on the target", r, prefix(s, 32))
		}
	}
	return s, nil
}

// prefix cuts s to at most n bytes, at a rune boundary when s is UTF-8.
func prefix(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
