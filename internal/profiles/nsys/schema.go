// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

// Package nsys imports Nsight Systems SQLite exports (`nsys export --type
// sqlite`) into the same spans, metrics and leak-suspect logs as a Kineto
// import (internal/profile), so that a profile taken with nsys joins the
// rest of the pipeline the same way.
//
// The export's tables and columns change between nsys versions, so the
// schema is probed (sqlite_master and PRAGMA table_info) and every column is
// optional: a missing one reads as NULL. The file is opened read-only and
// immutable, so no index can be built: every join (runtime call to kernel,
// NVTX range to runtime call, free to allocation) is a Go map or a sweep.
package nsys

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"

	_ "modernc.org/sqlite" // registers the "sqlite" driver (pure Go, no cgo)
)

// sqliteMagic is the first 16 bytes of every SQLite 3 database file.
const sqliteMagic = "SQLite format 3\x00"

// IsNsysSQLite tells an SQLite database (which an nsys export is) from the
// other files the receiver reads, from the first bytes of a file. Whether
// the database is an nsys export is only known once its tables are read.
func IsNsysSQLite(prefix []byte) bool {
	return bytes.HasPrefix(prefix, []byte(sqliteMagic))
}

// Tables the importer reads (documented nsys export schema).
const (
	tStrings      = "StringIds"
	tKernel       = "CUPTI_ACTIVITY_KIND_KERNEL"
	tMemcpy       = "CUPTI_ACTIVITY_KIND_MEMCPY"
	tMemset       = "CUPTI_ACTIVITY_KIND_MEMSET"
	tRuntime      = "CUPTI_ACTIVITY_KIND_RUNTIME"
	tNVTX         = "NVTX_EVENTS"
	tMemory       = "CUDA_GPU_MEMORY_USAGE_EVENTS"
	tSessionStart = "TARGET_INFO_SESSION_START_TIME"
	tMetaExport   = "META_DATA_EXPORT"
	tAnalysis     = "ANALYSIS_DETAILS"
	tProcesses    = "PROCESSES"
	tEnumMemOper  = "ENUM_CUDA_DEV_MEM_EVENT_OPER"
	tEnumMemKind  = "ENUM_CUDA_MEM_KIND"
	tEnumMemcpy   = "ENUM_CUDA_MEMCPY_OPER"
)

// source is what the importer reads the export through: its tables and
// columns, and their rows. sqlSource reads the SQLite file; the fuzz test
// feeds rows without SQLite in between.
type source interface {
	has(table string) bool
	col(table, c string) bool
	// scan calls fn with each row's values of cols (int64, float64,
	// string, []byte or nil; nil for a column the table lacks). vals is
	// reused between rows.
	scan(table string, cols []string, fn func(vals []any) error) error
}

type sqlSource struct {
	db   *sql.DB
	s    schema
	name string
}

func (q sqlSource) has(table string) bool    { return q.s.has(table) }
func (q sqlSource) col(table, c string) bool { return q.s.col(table, c) }
func (q sqlSource) scan(table string, cols []string, fn func(vals []any) error) error {
	return scan(q.db, q.s, q.name, table, cols, fn)
}

// schema is what the export holds: table name -> column set.
type schema map[string]map[string]bool

func (s schema) has(table string) bool { return s[table] != nil }

func (s schema) col(table, c string) bool { return s[table][c] }

// dsn builds an SQLite URI that opens path read-only and immutable:
// immutable=1 tells SQLite the file cannot change, so it takes no lock and
// looks for no journal or WAL (an export on a read-only volume, or one being
// copied, is still readable and is never modified). modernc passes a name
// starting with "file:" to sqlite3_open_v2 with SQLITE_OPEN_URI, so these are
// SQLite's own URI parameters; a plain path would have its query dropped.
func dsn(path string) (string, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", err
	}
	u := url.URL{Path: filepath.ToSlash(abs)} // escapes '?', '#', '%' in the name
	return "file:" + u.EscapedPath() + "?mode=ro&immutable=1", nil
}

func quoteIdent(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }

// probe reads the tables and, for the tables the importer uses, their
// columns.
func probe(db *sql.DB, name string) (schema, error) {
	rows, err := db.QueryContext(context.Background(), `SELECT name FROM sqlite_master WHERE type IN ('table','view')`)
	if err != nil {
		return nil, fmt.Errorf("%s: cannot read the SQLite schema (%s): the file is damaged or not an SQLite database; re-export it with `nsys export --type sqlite`", name, err.Error()) // as text: the driver's error is no cause callers tell apart
	}
	var tables []string
	for rows.Next() {
		var t string
		if err := rows.Scan(&t); err != nil {
			_ = rows.Close() // the Scan's error is the one to report
			return nil, fmt.Errorf("%s: reading the SQLite schema: %w", name, err)
		}
		tables = append(tables, t)
	}
	_ = rows.Close() // rows.Err, below, reports the iteration's error
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("%s: reading the SQLite schema: %w", name, err)
	}
	wanted := map[string]bool{tStrings: true, tKernel: true, tMemcpy: true, tMemset: true, tRuntime: true,
		tNVTX: true, tMemory: true, tSessionStart: true, tMetaExport: true, tAnalysis: true, tProcesses: true,
		tEnumMemOper: true, tEnumMemKind: true, tEnumMemcpy: true}
	s := schema{}
	for _, t := range tables {
		if !wanted[t] {
			continue
		}
		cols := map[string]bool{}
		r, err := db.QueryContext(context.Background(), `PRAGMA table_info(`+quoteIdent(t)+`)`)
		if err != nil {
			return nil, fmt.Errorf("%s: reading the columns of %s: %w", name, t, err)
		}
		for r.Next() {
			var (
				cid     int
				cname   string
				ctype   sql.NullString
				notnull int
				dflt    any
				pk      int
			)
			if err := r.Scan(&cid, &cname, &ctype, &notnull, &dflt, &pk); err != nil {
				_ = r.Close() // the Scan's error is the one to report
				return nil, fmt.Errorf("%s: reading the columns of %s: %w", name, t, err)
			}
			cols[cname] = true
		}
		_ = r.Close() // r.Err, below, reports the iteration's error
		if err := r.Err(); err != nil {
			return nil, fmt.Errorf("%s: reading the columns of %s: %w", name, t, err)
		}
		s[t] = cols
	}
	return s, nil
}

// scan runs SELECT cols FROM table, with NULL in place of each column the
// table lacks (so that callers handle "absent" and "NULL" alike), and calls
// fn with each row's values (int64, float64, string, []byte or nil). vals
// is reused between rows.
func scan(db *sql.DB, s schema, name, table string, cols []string, fn func(vals []any) error) error {
	sel := make([]string, len(cols))
	for i, c := range cols {
		if s.col(table, c) {
			sel[i] = quoteIdent(c)
		} else {
			sel[i] = "NULL"
		}
	}
	rows, err := db.QueryContext(context.Background(), `SELECT `+strings.Join(sel, ", ")+` FROM `+quoteIdent(table))
	if err != nil {
		return fmt.Errorf("%s: reading %s: %w", name, table, err)
	}
	defer func() { _ = rows.Close() }() // rows.Err reports the iteration's error
	vals := make([]any, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return fmt.Errorf("%s: reading %s: %w", name, table, err)
		}
		if err := fn(vals); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("%s: reading %s: %w", name, table, err)
	}
	return nil
}

// asInt reads an integer column; ok is false for NULL and non-numbers.
func asInt(v any) (int64, bool) {
	switch x := v.(type) {
	case int64:
		return x, true
	case float64:
		return int64(x), true
	case []byte:
		n, err := strconv.ParseInt(string(x), 10, 64)
		return n, err == nil
	case string:
		n, err := strconv.ParseInt(x, 10, 64)
		return n, err == nil
	}
	return 0, false
}

func intOr(v any, d int64) int64 {
	if n, ok := asInt(v); ok {
		return n
	}
	return d
}

// str resolves a name column: nsys stores most names as ids into
// StringIds, but some versions (and NVTX's text column) store the text.
func str(v any, strs map[int64]string) string {
	switch x := v.(type) {
	case int64:
		return strs[x]
	case string:
		return x
	case []byte:
		return string(x)
	}
	return ""
}
