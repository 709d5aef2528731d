// Package openapi holds Paygate's API contract: the OpenAPI 3.1 document
// (openapi.yaml), the wire types that match its schemas, and a request
// validator compiled from the document itself, so that the contract a
// merchant reads is the one the server enforces.
package openapi

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"fmt"
	"math/big"
	"strconv"
	"strings"
	"sync"

	"go.yaml.in/yaml/v3"
)

//go:embed openapi.yaml
var document []byte

// YAML returns the OpenAPI document as written. The caller may modify the
// returned slice.
func YAML() []byte {
	return bytes.Clone(document)
}

// JSON returns the OpenAPI document converted to JSON, with its keys in the
// order they are written, for serving at GET /api/v1/openapi.json. The
// caller may modify the returned slice.
func JSON() []byte {
	return bytes.Clone(parsed().json)
}

// Version returns the interface version, info.version of the document.
// GET /api/v1/health answers it, so the two cannot drift.
func Version() string {
	return parsed().version
}

// Operation is one method and path of the document.
type Operation struct {
	Method string // upper case: GET, POST
	Path   string // in full, as a ServeMux pattern: /api/v1/payments/{id}
	ID     string // the operationId
}

// Operations returns every operation of the document, in document order.
func Operations() []Operation {
	return append([]Operation(nil), parsed().operations...)
}

// parsedDocument is the document converted once.
type parsedDocument struct {
	json       []byte
	operations []Operation
	version    string // info.version
}

// parsed converts the embedded document on first use. The document is part
// of the binary and a test parses it, so a failure here is a build defect.
var parsed = sync.OnceValue(func() parsedDocument {
	p, err := parseDocument(document)
	if err != nil {
		panic("openapi: the embedded document is invalid: " + err.Error())
	}
	return p
})

func parseDocument(src []byte) (parsedDocument, error) {
	var root yaml.Node
	if err := yaml.Unmarshal(src, &root); err != nil {
		return parsedDocument{}, err
	}
	var buf bytes.Buffer
	if err := writeJSON(&buf, &root); err != nil {
		return parsedDocument{}, err
	}
	if !json.Valid(buf.Bytes()) {
		return parsedDocument{}, fmt.Errorf("conversion produced invalid JSON")
	}
	ops, err := operations(&root)
	if err != nil {
		return parsedDocument{}, err
	}
	var version string
	if v := mappingValue(mappingValue(documentNode(&root), "info"), "version"); v != nil && v.Kind == yaml.ScalarNode {
		version = v.Value
	}
	if version == "" {
		return parsedDocument{}, fmt.Errorf("no info.version")
	}
	return parsedDocument{json: buf.Bytes(), operations: ops, version: version}, nil
}

// methods are the OpenAPI path item keys that are operations.
var methods = map[string]bool{
	"get": true, "put": true, "post": true, "delete": true,
	"options": true, "head": true, "patch": true, "trace": true,
}

func operations(root *yaml.Node) ([]Operation, error) {
	paths := mappingValue(documentNode(root), "paths")
	if paths == nil || paths.Kind != yaml.MappingNode {
		return nil, fmt.Errorf("no paths")
	}
	var ops []Operation
	for i := 0; i+1 < len(paths.Content); i += 2 {
		path, item := paths.Content[i].Value, paths.Content[i+1]
		if item.Kind != yaml.MappingNode {
			return nil, fmt.Errorf("path %s is not an object", path)
		}
		for j := 0; j+1 < len(item.Content); j += 2 {
			method := item.Content[j].Value
			if !methods[method] {
				continue
			}
			id := mappingValue(item.Content[j+1], "operationId")
			op := Operation{Method: strings.ToUpper(method), Path: path}
			if id != nil {
				op.ID = id.Value
			}
			ops = append(ops, op)
		}
	}
	return ops, nil
}

func documentNode(n *yaml.Node) *yaml.Node {
	if n.Kind == yaml.DocumentNode && len(n.Content) == 1 {
		return n.Content[0]
	}
	return n
}

func mappingValue(n *yaml.Node, key string) *yaml.Node {
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i+1]
		}
	}
	return nil
}

// writeJSON writes a YAML node as JSON, keeping the order of keys and the
// exact text of numbers and timestamps.
func writeJSON(buf *bytes.Buffer, n *yaml.Node) error {
	switch n.Kind {
	case yaml.DocumentNode:
		if len(n.Content) != 1 {
			return fmt.Errorf("line %d: expected one document", n.Line)
		}
		return writeJSON(buf, n.Content[0])
	case yaml.AliasNode:
		return writeJSON(buf, n.Alias)
	case yaml.MappingNode:
		buf.WriteByte('{')
		seen := make(map[string]bool, len(n.Content)/2)
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := n.Content[i]
			if k.Kind != yaml.ScalarNode || k.ShortTag() == "!!merge" {
				return fmt.Errorf("line %d: only plain keys are supported", k.Line)
			}
			if seen[k.Value] {
				return fmt.Errorf("line %d: duplicate key %q", k.Line, k.Value)
			}
			seen[k.Value] = true
			if i > 0 {
				buf.WriteByte(',')
			}
			writeString(buf, k.Value)
			buf.WriteByte(':')
			if err := writeJSON(buf, n.Content[i+1]); err != nil {
				return err
			}
		}
		buf.WriteByte('}')
	case yaml.SequenceNode:
		buf.WriteByte('[')
		for i, c := range n.Content {
			if i > 0 {
				buf.WriteByte(',')
			}
			if err := writeJSON(buf, c); err != nil {
				return err
			}
		}
		buf.WriteByte(']')
	case yaml.ScalarNode:
		return writeScalar(buf, n)
	default:
		return fmt.Errorf("line %d: unsupported YAML node", n.Line)
	}
	return nil
}

func writeScalar(buf *bytes.Buffer, n *yaml.Node) error {
	switch n.ShortTag() {
	case "!!null":
		buf.WriteString("null")
	case "!!bool":
		var b bool
		if err := n.Decode(&b); err != nil {
			return err
		}
		buf.WriteString(strconv.FormatBool(b))
	case "!!int":
		i, ok := new(big.Int).SetString(strings.ReplaceAll(n.Value, "_", ""), 0)
		if !ok {
			return fmt.Errorf("line %d: bad integer", n.Line)
		}
		buf.WriteString(i.String())
	case "!!float":
		if json.Valid([]byte(n.Value)) {
			buf.WriteString(n.Value)
			return nil
		}
		var f float64
		if err := n.Decode(&f); err != nil {
			return err
		}
		b, err := json.Marshal(f)
		if err != nil {
			return fmt.Errorf("line %d: %v", n.Line, err)
		}
		buf.Write(b)
	default: // !!str, !!timestamp, !!binary: the text as written
		writeString(buf, n.Value)
	}
	return nil
}

func writeString(buf *bytes.Buffer, s string) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s) // a string always encodes
	buf.Write(bytes.TrimRight(b.Bytes(), "\n"))
}
