// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package hygiene

import (
	"fmt"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"unicode"
)

// Link is one link target found in a Markdown file.
type Link struct {
	File   string // relative to the root, slash-separated
	Line   int
	Target string // as written
}

func (l Link) String() string { return fmt.Sprintf("%s:%d: %s", l.File, l.Line, l.Target) }

// Broken is a link that does not resolve, and why.
type Broken struct {
	Link
	Reason string
}

func (b Broken) String() string { return b.Link.String() + ": " + b.Reason }

// LinkReport is what CheckLinks found.
type LinkReport struct {
	Broken   []Broken
	External []Link // http(s) links: checked for syntax only (no network here)
}

var (
	fenceRE = regexp.MustCompile("^\\s{0,3}(```+|~~~+)")
	// codeSpanRE matches inline code, whose brackets are no links.
	codeSpanRE = regexp.MustCompile("(`+)[^`]*?(`+)")
	// inlineLinkRE: [text](dest "title") and ![alt](dest); dest may be <…>.
	inlineLinkRE = regexp.MustCompile(`\]\(\s*(<[^>\n]*>|[^)\s]+)(?:\s+(?:"[^"]*"|'[^']*'|\([^)]*\)))?\s*\)`)
	// refDefRE: a link reference definition, [label]: dest.
	refDefRE = regexp.MustCompile(`^\s{0,3}\[([^\]]+)\]:\s*(<[^>]*>|\S+)`)
	// fullRefRE: a full reference link, [text][label].
	fullRefRE = regexp.MustCompile(`\]\[([^\]]+)\]`)
	// htmlLinkRE: href and src attributes of inline HTML.
	htmlLinkRE = regexp.MustCompile(`(?i)<[a-z][^>]*\s(?:href|src)\s*=\s*"([^"]*)"`)
	// autolinkRE: <https://…>.
	autolinkRE = regexp.MustCompile(`<(https?://[^>\s]*)>`)
	// bareURLRE: a URL in running text, which GFM links by itself.
	bareURLRE = regexp.MustCompile(`https?://[^\s<>()\[\]]+`)
	// htmlAnchorRE: <a name="…"> or id="…", an anchor that is no heading.
	htmlAnchorRE = regexp.MustCompile(`(?i)<[a-z][^>]*\s(?:name|id)\s*=\s*"([^"]*)"`)
	headingRE    = regexp.MustCompile(`^\s{0,3}(#{1,6})(?:\s+(.*?))?\s*$`)
	closingRE    = regexp.MustCompile(`\s+#+$`)
	mdLinkTextRE = regexp.MustCompile(`!?\[([^\]]*)\]\([^)]*\)`)
	htmlTagRE    = regexp.MustCompile(`<[^>]+>`)
)

// mdDoc is one Markdown file, parsed as far as links need.
type mdDoc struct {
	links   []Link
	refs    map[string]bool // reference definition labels, folded
	refUses []Link          // [text][label]: Target holds the label
	anchors map[string]bool
}

// parseMarkdown finds the links, reference definitions, and heading anchors
// of a Markdown document, outside fenced code blocks and code spans.
func parseMarkdown(file string, content []byte) *mdDoc {
	d := &mdDoc{refs: map[string]bool{}, anchors: map[string]bool{}}
	slugs := map[string]int{}
	var fence string
	for i, line := range strings.Split(string(content), "\n") {
		n := i + 1
		line = strings.TrimRight(line, "\r")
		if m := fenceRE.FindStringSubmatch(line); m != nil {
			switch {
			case fence == "":
				fence = m[1]
				continue
			case isClosingFence(line, fence):
				fence = ""
				continue
			}
		}
		if fence != "" {
			continue
		}
		if m := headingRE.FindStringSubmatch(line); m != nil {
			s := Slug(headingText(m[2]))
			if k := slugs[s]; k > 0 {
				d.anchors[fmt.Sprintf("%s-%d", s, k)] = true
			} else {
				d.anchors[s] = true
			}
			slugs[s]++
		}
		for _, m := range htmlAnchorRE.FindAllStringSubmatch(line, -1) {
			d.anchors[m[1]] = true
		}
		text := codeSpanRE.ReplaceAllStringFunc(line, func(s string) string { return strings.Repeat(" ", len(s)) })
		add := func(target string) {
			target = strings.TrimSuffix(strings.TrimPrefix(target, "<"), ">")
			d.links = append(d.links, Link{File: file, Line: n, Target: target})
		}
		// A GFM footnote, [^label]: text, is no link definition; its text
		// is searched like any other.
		if m := refDefRE.FindStringSubmatch(text); m != nil && !strings.HasPrefix(m[1], "^") {
			d.refs[foldLabel(m[1])] = true
			// `[comment]: <> (…)`, an empty destination, is the usual way
			// of writing a comment that renders as nothing.
			if m[2] != "<>" {
				add(m[2])
			}
			continue
		}
		for _, m := range fullRefRE.FindAllStringSubmatch(text, -1) {
			d.refUses = append(d.refUses, Link{File: file, Line: n, Target: m[1]})
		}
		for _, re := range []*regexp.Regexp{inlineLinkRE, htmlLinkRE, autolinkRE} {
			for _, m := range re.FindAllStringSubmatch(text, -1) {
				add(m[1])
			}
			text = re.ReplaceAllStringFunc(text, func(s string) string { return strings.Repeat(" ", len(s)) })
		}
		// What is left: URLs GitHub links as they stand.
		for _, u := range bareURLRE.FindAllString(text, -1) {
			add(strings.TrimRight(u, ".,:;!?'\"*_~"))
		}
	}
	return d
}

// isClosingFence: a run of the opening fence's character, at least as long,
// and nothing else but spaces.
func isClosingFence(line, fence string) bool {
	t := strings.TrimSpace(line)
	return len(t) >= len(fence) && strings.Trim(t, fence[:1]) == ""
}

func foldLabel(s string) string { return strings.ToLower(strings.Join(strings.Fields(s), " ")) }

// headingText is a heading's text as rendered: closing #s, inline code
// marks, emphasis marks, link destinations and HTML tags gone.
func headingText(s string) string {
	s = closingRE.ReplaceAllString(s, "")
	if strings.Trim(s, "#") == "" {
		return ""
	}
	s = mdLinkTextRE.ReplaceAllString(s, "$1")
	s = htmlTagRE.ReplaceAllString(s, "")
	s = strings.NewReplacer("`", "", "**", "", "__", "").Replace(s)
	return strings.TrimSpace(s)
}

// Slug is the anchor GitHub gives a heading with this text: lower case,
// every space a hyphen, and every character other than a letter, a digit,
// a hyphen or an underscore dropped. (A repeated heading gets -1, -2, …;
// parseMarkdown adds those.)
func Slug(text string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(text) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsNumber(r) || unicode.Is(unicode.Mn, r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// CheckLinks checks every link of the Markdown files mdFiles, relative to
// root. known lists every file of the repository (relative,
// slash-separated): a relative link must name one of them or a directory
// holding one, so a link to a file that is ignored or not yet added counts
// as broken, as it would be in a fresh clone.
func CheckLinks(root string, mdFiles, known []string) (LinkReport, error) {
	files := map[string]bool{}
	dirs := map[string]bool{".": true}
	for _, f := range known {
		f = path.Clean(filepath.ToSlash(f))
		files[f] = true
		for d := path.Dir(f); d != "." && !dirs[d]; d = path.Dir(d) {
			dirs[d] = true
		}
	}
	docs := map[string]*mdDoc{}
	doc := func(f string) (*mdDoc, error) {
		if d, ok := docs[f]; ok {
			return d, nil
		}
		content, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(f)))
		if err != nil {
			return nil, err
		}
		d := parseMarkdown(f, content)
		docs[f] = d
		return d, nil
	}

	var rep LinkReport
	for _, f := range mdFiles {
		f = path.Clean(filepath.ToSlash(f))
		d, err := doc(f)
		if err != nil {
			return rep, err
		}
		for _, u := range d.refUses {
			if !d.refs[foldLabel(u.Target)] {
				rep.Broken = append(rep.Broken, Broken{u, "no reference definition [" + u.Target + "]: in this file"})
			}
		}
		for _, l := range d.links {
			reason, external := checkLink(l, f, files, dirs, doc)
			if external {
				rep.External = append(rep.External, l)
			}
			if reason != "" {
				rep.Broken = append(rep.Broken, Broken{l, reason})
			}
		}
	}
	sort.SliceStable(rep.Broken, func(i, j int) bool {
		a, b := rep.Broken[i], rep.Broken[j]
		return a.File < b.File || a.File == b.File && a.Line < b.Line
	})
	return rep, nil
}

func checkLink(l Link, from string, files, dirs map[string]bool, doc func(string) (*mdDoc, error)) (reason string, external bool) {
	t := l.Target
	if t == "" {
		return "empty link target", false
	}
	u, err := url.Parse(t)
	if err != nil {
		return "not a valid URL: " + err.Error(), false
	}
	if u.Scheme != "" {
		switch u.Scheme {
		case "http", "https":
			if u.Host == "" {
				return "no host in the URL", true
			}
			if strings.ContainsAny(t, " \t") {
				return "a space in the URL", true
			}
			return "", true
		case "mailto":
			return "", false
		}
		return "scheme " + u.Scheme + ": is neither a repository path nor http(s)", false
	}
	if u.Host != "" {
		return "a protocol-relative URL (write https://)", false
	}
	target := from
	if u.Path != "" {
		if strings.HasPrefix(u.Path, "/") {
			target = path.Clean(strings.TrimPrefix(u.Path, "/"))
		} else {
			target = path.Join(path.Dir(from), u.Path)
		}
		if target == ".." || strings.HasPrefix(target, "../") {
			return "points outside the repository", false
		}
		if !files[target] && !dirs[target] {
			return "no such file or directory: " + target, false
		}
	}
	if u.Fragment == "" && !strings.HasSuffix(t, "#") {
		return "", false
	}
	if !strings.HasSuffix(target, ".md") || !files[target] {
		return "", false // line anchors of source files and the like
	}
	d, err := doc(target)
	if err != nil {
		return "reading " + target + ": " + err.Error(), false
	}
	if !d.anchors[u.Fragment] {
		return fmt.Sprintf("no heading in %s has the anchor #%s", target, u.Fragment), false
	}
	return "", false
}

// MarkdownFiles picks the Markdown files of a repository listing.
func MarkdownFiles(files []string) []string {
	var md []string
	for _, f := range files {
		if strings.EqualFold(path.Ext(f), ".md") {
			md = append(md, f)
		}
	}
	return md
}
