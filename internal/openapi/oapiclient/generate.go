package oapiclient

// The generator is pinned (the design's dependencies: oapi-codegen v2.8.2);
// TestGeneratedFileIsCurrent checks the committed client.gen.go is its
// output for the current document.
//go:generate go run github.com/oapi-codegen/oapi-codegen/v2/cmd/oapi-codegen@v2.8.2 -config oapi-codegen.yaml ../openapi.yaml
